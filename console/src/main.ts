/** The console's shell: sign-in, the project picker and a hash router over the views. */
import './style.css';
import { call } from './api';
import { completeSignIn, currentSession, savedProvider, sessionEnded, signIn, signOut, SIGNED_OUT } from './auth';
import { errorBox, h, replace } from './dom';
import { nodeView } from './graph';
import { plotView } from './plot';
import { referenceView } from './reference';
import { requestsView } from './requests';
import { assetsView, dataSetsView, eventsView, filesView, instancesView, modelsView, recordsView, sequencesView, streamsView, timeSeriesView } from './views';

const app = document.getElementById('app')!;
const go = (hash: string) => (location.hash = `#${hash}`);

const SECTIONS: [string, string][] = [
  ['events', 'Events'],
  ['assets', 'Assets'],
  ['timeseries', 'Time series'],
  ['datasets', 'Data sets'],
  ['files', 'Files'],
  ['sequences', 'Sequences'],
  ['streams', 'Streams'],
  ['models', 'Data models'],
  ['instances', 'Instances'],
  ['requests', 'Requests'],
  ['reference', 'API reference'],
];

function signInPage(problem?: unknown): HTMLElement {
  const provider = savedProvider();
  const form = h(
    'form',
    { class: 'signin' },
    h('h1', {}, 'Strata console'),
    h('p', {}, 'Sign in with the built-in identity provider (its administrator client by default) or the OpenID Connect provider your project trusts.'),
    h('label', {}, 'Issuer', h('input', { name: 'issuer', value: provider.issuer })),
    h('label', {}, 'Client id', h('input', { name: 'clientId', value: provider.clientId })),
    h('label', {}, 'Scope', h('input', { name: 'scope', value: provider.scope })),
    problem ? errorBox(problem) : null,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const text = (k: string) => String(data.get(k) ?? '').trim();
    signIn({ issuer: text('issuer'), clientId: text('clientId'), scope: text('scope') }, location.hash).catch((error) => replace(app, signInPage(error)));
  });
  return form;
}

function projectsPage(): HTMLElement {
  const list = h('ul', { class: 'projects' }, h('li', { class: 'muted' }, 'Loading…'));
  call<{ subject: string; projects: { projectUrlName: string }[] }>('/api/v1/token/inspect')
    .then((inspect) => {
      const names = inspect.projects.map((p) => p.projectUrlName);
      replace(list, names.length ? names.map((n) => h('li', {}, h('a', { href: `#/p/${encodeURIComponent(n)}/events` }, n))) : h('li', {}, `${inspect.subject} has access to no project.`));
    })
    .catch((error) => replace(list, errorBox(error)));
  return h('section', {}, h('h2', {}, 'Projects'), list);
}

function layout(project: string | undefined, section: string | undefined, content: HTMLElement): HTMLElement {
  const nav = project
    ? h('nav', {}, SECTIONS.map(([key, title]) => h('a', { href: `#/p/${encodeURIComponent(project)}/${key}`, class: key === section ? 'active' : undefined }, title)))
    : null;
  return h(
    'div',
    { class: 'shell' },
    h(
      'header',
      {},
      h('a', { href: '#/', class: 'brand' }, 'Strata'),
      project ? h('span', { class: 'project' }, project, ' ', h('a', { href: '#/' }, '(change)')) : null,
      h('button', { class: 'signout', onclick: () => (signOut(), render()) }, 'Sign out'),
    ),
    nav,
    h('main', {}, content),
  );
}

function route(parts: string[]): [string | undefined, string | undefined, HTMLElement] {
  if (parts[0] !== 'p' || !parts[1]) return [undefined, undefined, projectsPage()];
  const project = parts[1];
  const [section = 'events', a, b] = parts.slice(2);
  const views: Record<string, () => HTMLElement> = {
    events: () => eventsView(project),
    assets: () => assetsView(project),
    timeseries: () => timeSeriesView(project, go),
    plot: () => plotView(project, (a ?? '').split(',').map(Number).filter(Number.isFinite)),
    datasets: () => dataSetsView(project),
    files: () => filesView(project),
    sequences: () => sequencesView(project),
    streams: () => (a ? recordsView(project, a) : streamsView(project, go)),
    models: () => modelsView(project, go),
    instances: () => instancesView(project, go, a),
    node: () => nodeView(project, a, b, go),
    requests: () => requestsView(project),
    reference: () => referenceView(project),
  };
  const view = views[section] ?? views.events;
  return [project, section === 'plot' ? 'timeseries' : section === 'node' ? 'instances' : section, view()];
}

/** The session's end, when the sign-in page comes back by itself. */
let expiry: ReturnType<typeof setTimeout> | undefined;

function render(): void {
  clearTimeout(expiry);
  const session = currentSession();
  if (!session) return replace(app, signInPage());
  expiry = setTimeout(() => sessionEnded('Your sign-in has expired: sign in again to go on.'), Math.min(session.expiresAt - Date.now(), 2 ** 31 - 1));
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [project, section, content] = route(parts);
  replace(app, layout(project, section, content));
}

window.addEventListener('hashchange', render);
window.addEventListener(SIGNED_OUT, (event) => {
  clearTimeout(expiry);
  replace(app, signInPage(new Error((event as CustomEvent<string>).detail)));
});
completeSignIn()
  .then((returnTo) => {
    if (returnTo && returnTo !== location.hash) location.hash = returnTo;
    render();
  })
  .catch((error) => replace(app, signInPage(error)));
