// Parse every ```mermaid block of the Markdown on stdin with the real Mermaid library and print, as JSON,
// one entry per block: what Mermaid understood (diagram type, xychart data) and how many elements its
// layout produced, or the parser's error. Run from a directory whose node_modules holds mermaid and jsdom
// (tests/mermaid_support.py installs them); jsdom gives Mermaid the DOM it sanitises text with.
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');

const markdown = readFileSync(0, 'utf8');
const blocks = [...markdown.matchAll(/^(`{3,})mermaid\n([\s\S]*?)\n\1$/gm)].map((m) => m[2]);
const out = [];
for (const text of blocks) {
  try {
    const parsed = await mermaid.parse(text);
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const entry = { ok: true, type: parsed.diagramType };
    if (typeof diagram.db.getXYChartData === 'function') {
      entry.data = diagram.db.getXYChartData();
      entry.drawables = diagram.db.getDrawableElem().length;
    }
    out.push(entry);
  } catch (error) {
    out.push({ ok: false, error: String(error && error.message || error) });
  }
}
process.stdout.write(JSON.stringify(out));
