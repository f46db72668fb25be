/// The class page's style: high contrast (dark text on white, every state in words as well as
/// colour), large progress figures readable across a classroom, a grid that fits 1280×800 and a
/// tablet, a visible keyboard focus. System fonts only.
enum PageStyle {
    static let source = """
        :root { --ink: #111; --paper: #fff; --line: #444; --ok: #0a6b2e; --bad: #b00020; --run: #0b3d91;
          --wait: #555; --focus: #ffbf00; font-family: system-ui, "DejaVu Sans", sans-serif; }
        * { box-sizing: border-box; }
        body { margin: 0; color: var(--ink); background: var(--paper); font-size: 18px; line-height: 1.35; }
        .top { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 12px;
          padding: 10px 20px; background: #111; color: #fff; }
        h1 { margin: 0; font-size: 1.6rem; } .sub { font-weight: 400; }
        .counts { display: flex; flex-wrap: wrap; gap: 18px; }
        .count { font-size: 1.05rem; } .count .n { font-size: 2.2rem; font-weight: 800; margin-right: 4px; }
        .count.verified .n { color: #7dffa8; } .count.failed .n { color: #ff8a8a; }
        .count.working .n { color: #9cc3ff; } .count.eta .n { color: #fff; }
        main { padding: 12px 20px 40px; }
        .panel { margin-bottom: 14px; }
        h2 { font-size: 1.25rem; margin: 6px 0 8px; }
        .drop { display: flex; align-items: center; gap: 14px; padding: 14px; border: 3px dashed var(--line);
          border-radius: 8px; }
        .drop.over { border-color: var(--run); background: #eef3ff; }
        .drop input[type=file] { position: absolute; left: -9999px; }
        .drop input[type=file]:focus + .hint, .drop label:focus-within { outline: 4px solid var(--focus); }
        button, .button { font: inherit; font-weight: 700; padding: 8px 16px; border: 2px solid var(--ink);
          border-radius: 6px; background: #fff; color: var(--ink); cursor: pointer; }
        button.primary { background: var(--run); color: #fff; border-color: var(--run); font-size: 1.15rem; }
        button:disabled { opacity: .45; cursor: not-allowed; }
        button:focus-visible, .button:focus-visible, input:focus-visible { outline: 4px solid var(--focus);
          outline-offset: 2px; }
        .refusal { margin-top: 10px; padding: 12px 14px; border: 3px solid var(--bad); color: var(--bad);
          font-weight: 700; white-space: pre-wrap; word-break: break-word; }
        .banner { padding: 16px; margin-bottom: 12px; border: 4px solid var(--bad); font-size: 1.2rem;
          font-weight: 700; color: var(--bad); }
        .summary { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 10px 0 0; }
        .summary dt { font-weight: 700; } .summary dd { margin: 0; }
        .toolbar { display: flex; flex-wrap: wrap; align-items: center; gap: 10px; margin-bottom: 12px; }
        .estimate { flex: 1 1 260px; font-weight: 600; }
        .boards { list-style: none; margin: 0; padding: 0; display: grid; gap: 10px;
          grid-template-columns: repeat(auto-fill, minmax(196px, 1fr)); }
        .board { border: 3px solid var(--line); border-radius: 8px; padding: 8px 10px; background: #fff; }
        .board header { display: flex; align-items: center; gap: 8px; }
        .board input[type=checkbox] { width: 24px; height: 24px; }
        .board .name { font-size: 1.3rem; font-weight: 800; }
        .board .meta, .board .line { font-size: .85rem; color: #333; white-space: nowrap; overflow: hidden;
          text-overflow: ellipsis; }
        .board .big { font-size: 2.1rem; font-weight: 800; line-height: 1.1; }
        .board .path { font-weight: 700; }
        .bar { height: 16px; border: 2px solid var(--ink); border-radius: 4px; margin: 4px 0; background: #fff; }
        .bar .fill { height: 100%; width: 0; background: var(--run); }
        .board[data-status=verified] { border-color: var(--ok); background: #effaf2; }
        .board[data-status=verified] .big { color: var(--ok); }
        .board[data-status=verified] .bar .fill, .board[data-status=finished] .bar .fill { background: var(--ok); }
        .board[data-status=finished] { border-color: var(--ok); } .board[data-status=finished] .big { color: var(--ok); }
        .board[data-status=failed] { border-color: var(--bad); background: #fff0f2; }
        .board[data-status=failed] .big { color: var(--bad); }
        .board[data-status=working] { border-color: var(--run); }
        .board[data-status=waiting] .big { color: var(--wait); }
        .board .reason { color: var(--bad); font-weight: 700; font-size: .95rem; word-break: break-word; }
        .board .retry { margin-top: 6px; }
        @media (max-width: 820px) { body { font-size: 17px; } .boards { grid-template-columns: repeat(auto-fill,
          minmax(180px, 1fr)); } .count .n { font-size: 1.8rem; } }
        """
}
