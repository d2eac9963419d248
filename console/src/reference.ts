/** The API reference, from GET /openapi.json, with "try it": the request goes out with the signed-in token. */
import { call } from './api';
import { errorBox, h, replace } from './dom';

type Parameter = { name: string; in: string; required?: boolean; $ref?: string };
type Doc = { paths: Record<string, Record<string, Operation>>; components?: { parameters?: Record<string, Parameter> } };
type Operation = { summary?: string; description?: string; operationId?: string; tags?: string[]; parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: unknown }> }; 'x-capability'?: string[] };

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

/** A parameter, or the shared one it refers to (`#/components/parameters/project`). */
function resolve(doc: Doc, p: Parameter): Parameter {
  return p.$ref ? (doc.components?.parameters?.[p.$ref.split('/').pop()!] ?? p) : p;
}

function tryIt(doc: Doc, path: string, method: string, op: Operation, project: string): HTMLElement {
  const params = (op.parameters ?? []).map((p) => resolve(doc, p)).filter((p) => p.in === 'path' || p.in === 'query');
  const inputs = params.map((p) => h('input', { name: p.name, 'data-in': p.in, placeholder: p.name + (p.required ? ' (required)' : ''), value: p.name === 'project' ? project : undefined }));
  const body = op.requestBody ? h('textarea', { rows: 6, name: 'body', 'aria-label': 'Request body' }, '{}') : null;
  const out = h('pre', { class: 'response result', 'aria-live': 'polite' });
  const send = async () => {
    let url = path;
    const query = new URLSearchParams();
    inputs.forEach((input, i) => {
      const p = params[i];
      if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(input.value));
      else if (input.value) query.set(p.name, input.value);
    });
    if (query.size) url += `?${query}`;
    replace(out, 'Sending…');
    try {
      const result = await call(url, body ? JSON.parse(body.value) : undefined, method.toUpperCase());
      replace(out, JSON.stringify(result, null, 2));
    } catch (error) {
      replace(out, errorBox(error));
    }
  };
  const schema = op.requestBody?.content?.['application/json']?.schema;
  return h(
    'div',
    { class: 'try' },
    op.description ? h('p', {}, op.description) : null,
    op['x-capability']?.length ? h('p', { class: 'muted' }, 'Needs ', op['x-capability'].join(', ')) : null,
    schema ? h('details', {}, h('summary', {}, 'Body schema'), h('pre', { class: 'response' }, JSON.stringify(schema, null, 2))) : null,
    params.map((p, i) => h('label', {}, `${p.name} `, inputs[i])),
    body,
    h('button', { onclick: () => void send() }, 'Send'),
    out,
  );
}

export function referenceView(project: string): HTMLElement {
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const search = h('input', { placeholder: 'filter operations', 'aria-label': 'Filter operations' });
  let doc: Doc | undefined;
  function render(): void {
    const words = search.value.trim().toLowerCase();
    const groups = new Map<string, HTMLElement[]>();
    for (const [path, ops] of Object.entries(doc!.paths)) {
      for (const method of METHODS) {
        const op = ops[method];
        if (!op) continue;
        const text = `${method} ${path} ${op.summary ?? ''} ${op.operationId ?? ''}`.toLowerCase();
        if (words && !text.includes(words)) continue;
        const tag = op.tags?.[0] ?? 'Other';
        const details = h('details', { class: 'operation' }, h('summary', {}, h('span', { class: `method ${method}` }, method.toUpperCase()), ' ', h('code', {}, path), ' ', h('span', { class: 'muted' }, op.summary ?? op.operationId ?? '')));
        details.addEventListener('toggle', () => {
          if (details.open && details.childElementCount === 1) details.append(tryIt(doc!, path, method, op, project));
        });
        if (!groups.has(tag)) groups.set(tag, []);
        groups.get(tag)!.push(details);
      }
    }
    replace(list, [...groups].map(([tag, items]) => h('section', {}, h('h3', {}, tag), items)));
  }
  void fetch('/openapi.json', { credentials: 'omit' })
    .then((r) => r.json())
    .then((d: Doc) => {
      doc = d;
      render();
    })
    .catch((error) => replace(list, errorBox(error)));
  search.addEventListener('input', () => doc && render());
  return h('section', {}, h('h2', {}, 'API reference'), search, list);
}
