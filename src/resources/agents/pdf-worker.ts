/**
 * A worker thread reading the text of one PDF (documents.ts): reading a large or hostile PDF is CPU work
 * that would otherwise hold the event loop, and a worker can be stopped at a deadline.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { extractText, getDocumentProxy } from 'unpdf';

try {
  const { text } = await extractText(await getDocumentProxy(new Uint8Array(workerData as Uint8Array)), { mergePages: true });
  parentPort!.postMessage({ text });
} catch {
  parentPort!.postMessage({});
}
