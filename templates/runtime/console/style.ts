/**
 * The console page's style sheet: system fonts only (no font or image is fetched), contrast of at least
 * 4.5:1 for text, a visible focus ring, one column on narrow screens. Sent inline with a hash in the
 * Content-Security-Policy. Part of your project: edit freely (the hash follows the text).
 */
export const PAGE_STYLE = `
:root { color-scheme: light; --fg: #1a1a1a; --muted: #4a4a4a; --accent: #0b4f9c; --bad: #a4000f; --line: #c8c8c8; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #fff; }
header, main, footer { max-width: 52rem; margin: 0 auto; padding: 1rem; }
header { border-bottom: 1px solid var(--line); }
h1 { margin: 0 0 .25rem; font-size: 1.6rem; }
.meta, .help { color: var(--muted); }
.help { margin: .15rem 0 .35rem; font-size: .92rem; }
section.capability { border: 1px solid var(--line); border-radius: 6px; padding: 1rem; margin: 1rem 0; }
section.capability h2 { margin-top: 0; font-size: 1.3rem; overflow-wrap: anywhere; }
header p, section.capability > p, nav a, .result p { overflow-wrap: anywhere; }
.price { font-weight: 600; }
.field { margin: .75rem 0; }
.field > label, legend { display: block; font-weight: 600; overflow-wrap: anywhere; }
fieldset { border: 1px solid var(--line); border-radius: 4px; padding: .5rem .75rem; margin: .75rem 0; min-width: 0; }
.check { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.check .help, .check .error { flex-basis: 100%; }
.choices { display: flex; flex-wrap: wrap; gap: .5rem 1rem; }
.req { color: var(--bad); font-weight: normal; font-size: .9rem; }
input[type=text], input[type=number], select, textarea { width: 100%; font: inherit; padding: .4rem; border: 1px solid #767676; border-radius: 4px; color: var(--fg); background: #fff; }
textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
input[type=checkbox] { width: 1.15rem; height: 1.15rem; }
[aria-invalid=true] { border-color: var(--bad); outline: 1px solid var(--bad); }
.error, .form-error, .refused { color: var(--bad); font-weight: 600; }
button { font: inherit; padding: .55rem 1rem; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; min-height: 44px; }
button:disabled { background: #5c5c5c; border-color: #5c5c5c; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #c45500; outline-offset: 2px; }
pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem; overflow-wrap: anywhere; }
pre { background: #f3f3f3; padding: .75rem; overflow-x: auto; white-space: pre-wrap; }
.result { border-top: 1px solid var(--line); margin-top: 1rem; padding-top: .5rem; }
.note { background: #fff6d6; border: 1px solid #8a6d00; padding: .5rem .75rem; border-radius: 4px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 30rem) { header, main, footer { padding: .6rem; } section.capability { padding: .6rem; } button { width: 100%; } }
`;
