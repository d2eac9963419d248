/**
 * The document tools: a question answered from files' text, and a summary of each file, through the
 * configured language model. A file's text is its content when it is text, or the text of its pages when it
 * is a PDF (read with unpdf, in a worker thread stopped at a deadline); the files are those the caller's
 * scope reaches, read as the files area reads them. A file's text is cut to a size the model can take.
 */
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { ApiError, badRequest, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import type { RefInput } from '../../query/refs.js';
import { workerUrl } from '../../storage/worker-url.js';
import { openContent } from '../files/content.js';
import { languageModel } from './llm.js';

/** Characters of one file's text given to the model. */
const TEXT_CHARS = 60_000;
/** Bytes of a file read for its text. */
const MAX_FILE_BYTES = 20 * 1024 * 1024;
/** Longest time reading one PDF's text may take. */
const PDF_DEADLINE_MS = 30_000;

interface DocumentText {
  ref: RefInput;
  id: number;
  name: string;
  text: string;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function isPdf(bytes: Buffer, mimeType: unknown, name: unknown): boolean {
  return bytes.subarray(0, 5).toString('latin1') === '%PDF-' || mimeType === 'application/pdf' || /\.pdf$/i.test(String(name ?? ''));
}

async function textOf(bytes: Buffer, file: Record<string, unknown>, path: Array<string | number>): Promise<string> {
  if (isPdf(bytes, file.mimeType, file.name)) {
    const text = await pdfText(bytes);
    if (text === undefined) throw badRequest(`${formatPath(path)}: the file is not a PDF whose text can be read within ${PDF_DEADLINE_MS / 1000} s`);
    return text;
  }
  const text = bytes.toString('utf8');
  // Text that is not valid UTF-8, or holds control characters, is some other kind of file.
  if (text.includes('\uFFFD') || /[\u0000-\u0008\u000E-\u001F]/.test(text)) throw badRequest(`${formatPath(path)}: the file is neither text nor a PDF`);
  return text;
}

/** The text of a PDF, read in a worker thread; undefined when it cannot be read, or not before the deadline. */
function pdfText(bytes: Buffer): Promise<string | undefined> {
  return new Promise((resolve) => {
    const worker = new Worker(workerUrl('pdf-worker.js', import.meta.url), { workerData: bytes, resourceLimits: { maxOldGenerationSizeMb: 512 } });
    const done = (text: string | undefined) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(text);
    };
    const timer = setTimeout(() => done(undefined), PDF_DEADLINE_MS);
    worker.once('message', (m: { text?: string }) => done(m.text));
    worker.once('error', () => done(undefined));
  });
}

/** The text of each file, in order; with `ignoreUnknownIds`, files that are missing or have no content are left out. */
async function documentTexts(services: Services, projectId: number, refs: readonly RefInput[], key: string, ignoreUnknownIds: boolean): Promise<DocumentText[]> {
  const out: DocumentText[] = [];
  for (const [i, ref] of refs.entries()) {
    const path = [key, i];
    let opened;
    try {
      opened = await openContent(services, projectId, ref, path);
    } catch (err) {
      if (ignoreUnknownIds && err instanceof ApiError && err.status === 400) continue;
      throw err;
    }
    if (opened.size > MAX_FILE_BYTES) throw badRequest(`${formatPath(path)}: the file has ${opened.size} bytes; the document tools read files of at most ${MAX_FILE_BYTES}`);
    const text = await textOf(await readAll(await opened.open()), opened.file, path);
    out.push({ ref, id: opened.file.id, name: String(opened.file.name ?? ''), text: text.length > TEXT_CHARS ? text.slice(0, TEXT_CHARS) : text });
  }
  return out;
}

const documentBlock = (d: DocumentText) => `--- Document "${d.name}" (file id ${d.id}) ---\n${d.text}`;

export async function askDocuments(
  services: Services,
  projectId: number,
  body: { question: string; fileIds: RefInput[]; additionalContext?: string; language?: string; ignoreUnknownIds?: boolean },
) {
  const model = languageModel(services);
  const docs = await documentTexts(services, projectId, body.fileIds, 'fileIds', body.ignoreUnknownIds ?? false);
  const system = [
    'Answer the question from the documents below only. Say so when they do not hold the answer.',
    body.language ? `Answer in ${body.language}.` : '',
    body.additionalContext ? `Context: ${body.additionalContext}` : '',
  ].filter(Boolean).join(' ');
  const completion = await model.complete({ messages: [{ role: 'system', content: `${system}\n\n${docs.map(documentBlock).join('\n\n')}` }, { role: 'user', content: body.question }] });
  const references = docs.map((d) => ({
    fileId: d.id,
    fileName: d.name,
    ...('externalId' in d.ref ? { externalId: d.ref.externalId } : {}),
    ...('instanceId' in d.ref ? { instanceId: d.ref.instanceId } : {}),
    // Strata does not locate the answer on the pages: it names the documents it was given.
    locations: [],
  }));
  return { content: [{ text: completion.content ?? '', references }] };
}

export async function summarizeDocuments(services: Services, projectId: number, body: { items: RefInput[]; ignoreUnknownIds?: boolean }) {
  const model = languageModel(services);
  const docs = await documentTexts(services, projectId, body.items, 'items', body.ignoreUnknownIds ?? false);
  const items = [];
  for (const d of docs) {
    const completion = await model.complete({ messages: [{ role: 'system', content: 'Summarize the document the user gives, in a few sentences.' }, { role: 'user', content: documentBlock(d) }] });
    items.push({ ...d.ref, summary: completion.content ?? '' });
  }
  return { items };
}
