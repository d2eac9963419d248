/**
 * The seismic API, removed from the reference on 2026-05-05 (the dated row `seismicApi`). Its operations
 * answer 410 saying so at versions from that date; at earlier versions they answer the 501 of any operation
 * Strata does not implement. The answer is the same for every principal and project, so no capability is
 * asked for.
 */
import type { Area } from '../../http/area.js';
import { DATED_CHANGES } from '../../http/dated-changes.js';
import { ApiError } from '../../http/errors.js';
import { wholePath } from '../../http/reference-catalog.js';
import { route, templatePath, type ApiRoute } from '../../http/route.js';
import type { ApiVersion } from '../../http/versioning.js';
import { noOperation } from '../../http/unimplemented.js';

/** The date of the dated row, as `YYYY-MM-DD`. */
const REMOVED = DATED_CHANGES.find((r) => r.key === 'seismicApi')!.date.replace(/^(\d{4})(\d{2})(\d{2})$/, '$1-$2-$3');

function answer(method: 'GET' | 'POST', path: string) {
  return ({ version }: { version: ApiVersion }): never => {
    if (version.at('seismicApi') === 'removed') {
      throw new ApiError(
        410,
        `The seismic API was removed on ${REMOVED}: ${method} ${templatePath(path)} is no longer served ` +
          `(version ${version.name} asks for the API as it is from that date on)`,
      );
    }
    throw noOperation(method, wholePath(templatePath(path)));
  };
}

const routes: ApiRoute[] = [
  { method: 'GET', path: '/seismic/seismics/segy/:seismicId' },
  { method: 'POST', path: '/seismic/batchdownload' },
].map(({ method, path }) =>
  route({
    method: method as 'GET' | 'POST',
    path,
    summary: 'Removed on 2026-05-05: answers 410 from that version, 501 before',
    capability: null,
    handler: answer(method as 'GET' | 'POST', path),
  }),
);

export const seismicArea: Area = { name: 'seismic (removed)', routes };
