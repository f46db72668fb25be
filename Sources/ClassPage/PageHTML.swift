/// The class page's HTML: one page, its script and style served by bitflash itself (no CDN, no
/// external font). The token of this start is written into the script's and style's URLs.
enum PageHTML {
    /// The page for `token` (32 hexadecimal digits, so it needs no escaping).
    static func page(token: String) -> String {
        template.replacingOccurrences(of: "TOKEN", with: token.filter(\.isHexDigit))
    }

    static let template = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>bitflash: flash a class set</title>
        <link rel="stylesheet" href="page.css?token=TOKEN">
        <script src="page.js?token=TOKEN" defer></script>
        </head>
        <body>
        <header class="top">
          <h1>bitflash <span class="sub">class set</span></h1>
          <div class="counts" id="counts" aria-live="polite">
            <div class="count verified"><span class="n" id="n-done">0</span> done</div>
            <div class="count failed"><span class="n" id="n-failed">0</span> failed</div>
            <div class="count working"><span class="n" id="n-working">0</span> flashing</div>
            <div class="count waiting"><span class="n" id="n-waiting">0</span> waiting</div>
            <div class="count eta"><span class="n" id="class-eta">–</span> left</div>
          </div>
        </header>
        <main>
          <div id="bluetooth" class="banner" role="alert" hidden></div>
          <section class="panel" aria-labelledby="file-title">
            <h2 id="file-title">1. Firmware file</h2>
            <div id="drop" class="drop">
              <label for="file" class="button">Choose a file…</label>
              <input type="file" id="file" accept=".hex,.uf2,.bin,.zip">
              <span class="hint">or drop a .hex from MakeCode here</span>
            </div>
            <div id="refusal" class="refusal" role="alert" hidden></div>
            <dl id="summary" class="summary" hidden></dl>
          </section>
          <section class="panel" aria-labelledby="boards-title">
            <h2 id="boards-title">2. Boards in range</h2>
            <div class="toolbar">
              <button type="button" id="select-all">Select all</button>
              <button type="button" id="select-none">Select none</button>
              <button type="button" id="scan" hidden>Scan again</button>
              <span id="estimate" class="estimate" aria-live="polite"></span>
              <button type="button" id="start" class="primary" disabled>Flash</button>
              <button type="button" id="retry-failed" disabled>Retry failed</button>
            </div>
            <ul id="boards" class="boards" aria-label="Boards"></ul>
          </section>
        </main>
        </body>
        </html>
        """
}
