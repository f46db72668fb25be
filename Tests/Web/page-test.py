#!/usr/bin/env python3
"""The class page (`bitflash serve`) in a real browser: Debian's Chromium driven by Playwright.

Usage: Tests/Web/page-test.py BIN_DIR [--screenshot FILE]
  BIN_DIR holds bitflash, bitflash-lab and bitflash-serve (e.g. .build/debug).
  --screenshot FILE  also saves a 1280x800 picture of the page during a class of 32 (for docs).

Checks, each a line `ok NAME` or `FAIL NAME: why`, then `N passed, N failed`:
  - a simulated class of 8 flashes from the page: the sample hex given through the file input,
    the file's summary shown, the class estimate shown, every board shown verified;
  - the same with 32 boards;
  - a wrong file shows the refusal in the command line's words (`bitflash flash` on the same file);
  - a board that fails (its program keeps Bluetooth off) shows why; Retry failed flashes it again;
  - a foreign Host, a cross-origin request, a missing and a wrong token are refused (403), and a
    refused start starts nothing; an upload larger than any board takes is refused (413).
Waits are on the page's state (Playwright's wait_for_function), never on time alone.
"""
import http.client
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile

from playwright.sync_api import sync_playwright

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHROMIUM = os.environ.get("BITFLASH_CHROMIUM", "/usr/bin/chromium")
results = []


def check(name, condition, why=""):
    results.append(bool(condition))
    print(f"ok {name}" if condition else f"FAIL {name}: {why}", flush=True)


class Server:
    """`bitflash serve --simulate --boards N` on a free port; its URL read from its first line."""

    def __init__(self, bin_dir, boards, speed, real=False, env=None, extra=()):
        simulated = [] if real else ["--simulate", "--boards", str(boards), "--speed", str(speed), *extra]
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "bitflash"), "serve", "--port", "0"] + simulated,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        line = self.proc.stdout.readline() if ready else ""
        if "http://" not in line:
            self.stop()
            raise RuntimeError(f"bitflash serve printed no URL: {line!r} {self.proc.stderr.read()!r}")
        self.url = line[line.index("http://"):].strip()
        self.host = self.url.split("/")[2]
        self.token = self.url.split("token=")[1]

    def request(self, method, path, body=None, headers=None, host=None):
        """One HTTP request with the Host given (the server's own by default): (status, text)."""
        address, port = self.host.rsplit(":", 1)
        conn = http.client.HTTPConnection(address, int(port), timeout=30)
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host or self.host)
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        text = response.read().decode("utf-8", "replace")
        conn.close()
        return response.status, text

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def flash_class(browser, bin_dir, boards, hex_file, wrong_files=None, screenshot=None):
    # Fast enough for CI; for the picture, slow enough that it shows boards at work.
    server = Server(bin_dir, boards, speed=2 if screenshot else 15)
    try:
        # The page's Content-Security-Policy forbids eval, which Playwright's waits on page state use.
        page = browser.new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)
        page.goto(server.url)
        page.wait_for_function(f"document.querySelectorAll('li.board').length === {boards}")
        for name, (path, words) in (wrong_files or {}).items():
            page.set_input_files("#file", path)
            page.wait_for_function(
                "w => !document.getElementById('refusal').hidden"
                " && document.getElementById('refusal').textContent === w", arg=words, timeout=30000)
            shown = page.text_content("#refusal")
            check(f"{name} shows the refusal in the command line's words", shown == words,
                  f"page {shown!r}, command line {words!r}")
        page.set_input_files("#file", hex_file)
        page.wait_for_selector("#summary:not([hidden])")
        summary = page.text_content("#summary")
        check(f"the file's summary names its boards, runtime and program ({boards})",
              "micro:bit V2" in summary and "runtime" in summary and "bytes" in summary, summary)
        page.wait_for_function("document.getElementById('estimate').textContent.startsWith('Estimate:')")
        estimate = page.text_content("#estimate")
        check(f"the class estimate is shown before the start ({boards})", f"{boards} boards" in estimate, estimate)
        if boards == 8:
            # Some boards, chosen with the keyboard: the estimate and the button follow the choice.
            page.click("#select-none")
            page.wait_for_function("document.getElementById('start').disabled")
            for name in ("sim-2", "sim-5"):
                page.focus(f"#choose-{name}")
                page.keyboard.press("Space")
            page.wait_for_function("document.getElementById('estimate').textContent.includes('2 boards')")
            check("some boards chosen with the keyboard get their own estimate",
                  page.text_content("#start") == "Flash 2 boards", page.text_content("#start"))
            page.click("#select-all")
            page.wait_for_function(f"document.getElementById('estimate').textContent.includes('{boards} boards')")
        page.focus("#start")
        page.keyboard.press("Enter")
        if screenshot:
            page.wait_for_function(
                "document.querySelectorAll('li.board[data-status=finished]').length >= 4 && "
                "document.querySelectorAll('li.board[data-status=working]').length >= 4", timeout=300_000)
            page.screenshot(path=screenshot)
        page.wait_for_function(
            f"document.querySelectorAll('li.board[data-status=verified]').length === {boards} && "
            "document.getElementById('n-working').textContent === '0'", timeout=600_000)
        verified = page.text_content("#n-done")
        paths = page.eval_on_selector_all("li.board .path", "els => els.map(e => e.textContent)")
        check(f"a simulated class of {boards} flashes from the page, every board verified",
              verified == str(boards) and paths == ["Path: partial"] * boards, f"{verified} {paths}")
        page.close()
    finally:
        server.stop()


def failure_and_retry(browser, bin_dir, hex_file):
    """A class whose last board runs a program without Bluetooth: it fails with the reason, and
    Retry failed flashes it again (and it fails again, for the same reason)."""
    server = Server(bin_dir, 4, speed=15, extra=["--sim-bluetooth-off", "1"])
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)
        page.goto(server.url)
        page.wait_for_function("document.querySelectorAll('li.board').length === 4")
        page.set_input_files("#file", hex_file)
        page.wait_for_selector("#summary:not([hidden])")
        page.wait_for_function("!document.getElementById('start').disabled")
        page.click("#start")
        page.wait_for_function(
            "document.querySelectorAll('li.board[data-status=verified]').length === 3 && "
            "document.querySelectorAll('li.board[data-status=failed]').length === 1 && "
            "!document.getElementById('retry-failed').disabled")
        reason = page.text_content('li[data-board="sim-4"] .reason')
        check("a board that fails shows why, with a Retry button",
              "does not use Bluetooth" in reason and page.is_visible('li[data-board="sim-4"] .retry'), reason)
        # Every status the failed board takes from now on, as the page sets it.
        page.evaluate("""() => {
            window.seen = [];
            const li = document.querySelector('li[data-board="sim-4"]');
            new MutationObserver(() => window.seen.push(li.dataset.status))
                .observe(li, { attributes: true, attributeFilter: ['data-status'] });
        }""")
        page.click("#retry-failed")
        page.wait_for_function(
            "window.seen.includes('waiting') && "
            "document.querySelector('li[data-board=\"sim-4\"]').dataset.status === 'failed' && "
            "document.getElementById('n-working').textContent === '0'")
        verified = page.eval_on_selector_all("li.board[data-status=verified]", "els => els.map(e => e.dataset.board)")
        check("Retry failed flashes the failed board again and leaves the others as they were",
              verified == ["sim-1", "sim-2", "sim-3"], verified)
        page.close()
    finally:
        server.stop()


def no_bluetooth(browser, bin_dir, tmp):
    """Real boards with no bluetoothd to reach (a system bus that does not exist): a clear page."""
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={tmp}/no-such-bus")
    server = Server(bin_dir, 0, 0, real=True, env=env)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)
        page.goto(server.url)
        page.wait_for_selector("#bluetooth:not([hidden])")
        text = page.text_content("#bluetooth")
        check("without Bluetooth the page says so, and why, and offers no flash",
              "Bluetooth is not available" in text and page.is_disabled("#start") and page.is_visible("#scan"), text)
        page.close()
    finally:
        server.stop()


def http_checks(bin_dir, hex_file):
    # At real speed, so that the class started below is still running when it is asked again.
    server = Server(bin_dir, 2, speed=1)
    try:
        t = server.token
        status, _ = server.request("GET", f"/api/state?token={t}")
        check("the page's own request with its token is answered", status == 200, status)
        status, text = server.request("GET", f"/api/state?token={t}", host=f"evil.example:{server.host.split(':')[1]}")
        check("a foreign Host (DNS rebinding) is refused", status == 403, f"{status} {text}")
        status, text = server.request("POST", f"/api/start?token={t}", body=b'{"boards":["sim-1","sim-2"]}',
                                      headers={"Origin": "http://evil.example", "Content-Type": "application/json"})
        _, state = server.request("GET", f"/api/state?token={t}")
        running = json.loads(state)["state"]["class"]["running"]
        check("a cross-origin request is refused and starts nothing", status == 403 and not running,
              f"{status} {text} running={running}")
        status, text = server.request("GET", "/")
        check("a request without the token is refused", status == 403 and "token" in text, f"{status} {text}")
        status, text = server.request("GET", "/?token=" + "0" * 32)
        check("a wrong token is refused", status == 403 and "token" in text, f"{status} {text}")
        status, text = server.request("GET", "/api/events", headers={"X-Bitflash-Token": t[:-1]})
        check("the event stream with a wrong token is refused", status == 403, f"{status} {text}")
        limit = json.loads(state)["state"]["uploadLimit"]
        # One flash at a time: a second start while the first runs is refused.
        with open(hex_file, "rb") as f:
            status, text = server.request("POST", f"/api/file?token={t}", body=f.read(),
                                          headers={"X-File-Name": "sample-r1-counter.hex"})
        check("the sample file is taken over HTTP too", status == 200 and "micro:bit V2" in text, f"{status} {text}")
        choice = b'{"boards":["sim-1","sim-2"]}'
        first, _ = server.request("POST", f"/api/start?token={t}", body=choice)
        second, text = server.request("POST", f"/api/start?token={t}", body=b'{"boards":["sim-1"]}')
        check("a board is never in two flashes: a start while one runs is refused",
              first == 200 and second == 422 and "running" in text, f"{first} {second} {text}")
        big = b"x" * (limit + 1)
        status, text = server.request("POST", f"/api/file?token={t}", body=big,
                                      headers={"Origin": f"http://{server.host}"})
        check("an upload larger than any board takes is refused", status == 413 and "larger than" in text,
              f"{status} {text[:200]}")
    finally:
        server.stop()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    bin_dir = os.path.abspath(sys.argv[1])
    screenshot = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([os.path.join(bin_dir, "bitflash-lab"), "sim", "samples", tmp], check=True,
                       stdout=subprocess.DEVNULL)
        hex_file = os.path.join(tmp, "sample-r1-counter.hex")
        wrong = os.path.join(tmp, "notes.txt")
        with open(wrong, "w") as f:
            f.write("Bring your micro:bit on Monday.\n")
        wrong_files = {"a wrong file": wrong}
        # A real firmware for another chip, from the corpus beside the repository when it is there.
        corpus = os.environ.get("BITFLASH_TESTDATA") or os.path.join(REPO, os.pardir, "shared", "testdata")
        foreign = os.path.join(corpus, "real", "uf2-nrf52840-s140-softdevice-6.1.1.uf2")
        if os.path.exists(foreign):
            # In the same folder, so that both front doors name it alike.
            wrong_files["the nRF52840 UF2 of the corpus"] = shutil.copy(foreign, tmp)
        else:
            print(f"SKIP the corpus's nRF52840 UF2 on the page: {foreign} not found")
        refusals = {}
        for name, path in wrong_files.items():
            # The command line's words for the same file, as `bitflash flash` prints them.
            cli = subprocess.run([os.path.join(bin_dir, "bitflash"), "flash", os.path.basename(path), "--simulate"],
                                 cwd=tmp,
                                 capture_output=True, text=True, env=dict(os.environ, XDG_STATE_HOME=tmp))
            refusal = cli.stderr.strip().removeprefix("bitflash: error: ")
            check(f"the command line refuses {name}", cli.returncode == 65 and refusal, cli.stderr)
            refusals[name] = (path, refusal)
        http_checks(bin_dir, hex_file)
        # `bitflash serve` with no bitflash-serve beside it says where it looked.
        alone = os.path.join(tmp, "alone")
        os.mkdir(alone)
        try:
            os.link(os.path.join(bin_dir, "bitflash"), os.path.join(alone, "bitflash"))
        except OSError:
            shutil.copy2(os.path.join(bin_dir, "bitflash"), os.path.join(alone, "bitflash"))
        missing = subprocess.run([os.path.join(alone, "bitflash"), "serve"], capture_output=True, text=True)
        check("bitflash serve without bitflash-serve beside it says where it looked",
              missing.returncode == 70 and os.path.join(alone, "bitflash-serve") in missing.stderr, missing.stderr)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            flash_class(browser, bin_dir, 8, hex_file, wrong_files=refusals)
            flash_class(browser, bin_dir, 32, hex_file, screenshot=screenshot)
            failure_and_retry(browser, bin_dir, hex_file)
            no_bluetooth(browser, bin_dir, tmp)
            browser.close()
    failed = results.count(False)
    print(f"{results.count(True)} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
