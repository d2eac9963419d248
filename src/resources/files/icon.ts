/**
 * `GET /files/icon`: a small PNG of an image file (JPEG, PNG, WebP, GIF, TIFF, AVIF, SVG), made with sharp
 * (libvips). An image is read whole to be scaled, so the content an icon is made of is bounded, in bytes and
 * in pixels; what cannot be read as an image, or is too large for an icon, is a 400 saying so.
 */
import sharp from 'sharp';
import { badRequest, formatPath } from '../../http/errors.js';
import { EncodedBody } from '../../http/json-text.js';
import type { Services } from '../../http/services.js';
import type { RefInput } from '../../query/refs.js';
import { openContent } from './content.js';
import type { IconQuery } from './schema.js';

/** The longest side of an icon, in pixels. */
const ICON_SIZE = 256;
/** The most content an icon is made of: an image file larger than this is not one to make an icon of. */
const ICON_MAX_BYTES = 50 * 1024 * 1024;
/** Decoded, an image of this many pixels takes about 100 MB; larger ones are refused before they are. */
const ICON_MAX_PIXELS = 25_000_000;

/** The file the query names: exactly one of id, externalId, or space with instanceExternalId. */
function iconRef(q: IconQuery): RefInput {
  const refs: RefInput[] = [];
  if (q.id !== undefined) refs.push({ id: q.id });
  if (q.externalId !== undefined) refs.push({ externalId: q.externalId });
  if (q.space !== undefined || q.instanceExternalId !== undefined) {
    if (q.space === undefined || q.instanceExternalId === undefined) throw badRequest('an instance id is given as both space and instanceExternalId');
    refs.push({ instanceId: { space: q.space, externalId: q.instanceExternalId } });
  }
  if (refs.length !== 1) throw badRequest('give exactly one of id, externalId, or space with instanceExternalId');
  return refs[0];
}

export async function fileIcon(services: Services, projectId: number, query: IconQuery): Promise<EncodedBody> {
  const ref = iconRef(query);
  const content = await openContent(services, projectId, ref, ['query']);
  if (content.size > ICON_MAX_BYTES) {
    throw badRequest(`${formatPath(['query'])}: the file has ${content.size} bytes; icons are made of images of at most ${ICON_MAX_BYTES} bytes`);
  }
  const source = await content.open();
  const scale = sharp({ limitInputPixels: ICON_MAX_PIXELS, failOn: 'error' }).rotate().resize(ICON_SIZE, ICON_SIZE, { fit: 'inside', withoutEnlargement: true }).png();
  try {
    const png = await source.pipe(scale).toBuffer();
    return new EncodedBody('image/png', png);
  } catch (error) {
    source.destroy();
    throw badRequest(`Cannot make an icon of the file ${JSON.stringify(ref)}: its content is not an image Strata can read (JPEG, PNG, WebP, GIF, TIFF, AVIF or SVG) (${(error as Error).message})`);
  }
}
