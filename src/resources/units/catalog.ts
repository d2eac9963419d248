/**
 * The units catalog, read from the data files shipped in `catalog/units/` and checked once, when the server
 * loads: a catalog that does not hold together stops the start rather than giving wrong conversions later.
 * What the rest of the server asks of it: a unit by externalId, the quantity of a unit, a unit system by
 * name, and the unit a system gives a quantity.
 */
import { readFileSync } from 'node:fs';
import { Type, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { badRequest, formatPath } from '../../http/errors.js';
import { UnitSchema, UnitSystemSchema, type Unit, type UnitSystem } from './schema.js';

/** The same relative path from src/resources/units and from the compiled dist/resources/units. */
export const UNIT_CATALOG_DIR = new URL('../../../catalog/units/', import.meta.url);

export interface UnitCatalog {
  /** In the files' order, which the list operation keeps. */
  readonly units: readonly Unit[];
  readonly systems: readonly UnitSystem[];
  unit(externalId: string): Unit | undefined;
  /** A unit system by name, in any letter case (`Imperial`, `imperial`). */
  system(name: string): UnitSystem | undefined;
  /** The unit a system gives a quantity, if it names one. */
  systemUnit(system: UnitSystem, quantity: string): Unit | undefined;
  /** The quantity of every unit, by unit externalId. */
  readonly quantityByUnit: ReadonlyMap<string, string>;
}

function checked<T>(schema: TSchema, data: unknown, file: string): T {
  const error = Value.Errors(Type.Array(schema), data).First();
  if (error) throw new Error(`units catalog ${file}: ${error.path || '/'}: ${error.message}`);
  return data as T;
}

/** The catalog from the two files' contents; throws naming the file and the place when they do not hold together. */
export function parseUnitCatalog(unitsData: unknown, systemsData: unknown): UnitCatalog {
  const units = checked<Unit[]>(UnitSchema, unitsData, 'units.json');
  const systems = checked<UnitSystem[]>(UnitSystemSchema, systemsData, 'unitSystems.json');
  const byId = new Map<string, Unit>();
  for (const u of units) {
    if (byId.has(u.externalId)) throw new Error(`units catalog units.json: ${JSON.stringify(u.externalId)} appears twice`);
    byId.set(u.externalId, u);
  }
  const byName = new Map<string, UnitSystem>();
  const perSystem = new Map<UnitSystem, Map<string, Unit>>();
  for (const s of systems) {
    const key = s.name.toLowerCase();
    if (byName.has(key)) throw new Error(`units catalog unitSystems.json: the system ${JSON.stringify(s.name)} appears twice`);
    byName.set(key, s);
    const units = new Map<string, Unit>();
    for (const q of s.quantities) {
      const unit = byId.get(q.unitExternalId);
      const where = `units catalog unitSystems.json: ${s.name}, ${q.name}`;
      if (!unit) throw new Error(`${where}: no unit ${JSON.stringify(q.unitExternalId)} in units.json`);
      if (unit.quantity !== q.name) throw new Error(`${where}: ${q.unitExternalId} measures ${unit.quantity}`);
      if (units.has(q.name)) throw new Error(`${where}: the quantity appears twice`);
      units.set(q.name, unit);
    }
    perSystem.set(s, units);
  }
  return {
    units,
    systems,
    unit: (externalId) => byId.get(externalId),
    system: (name) => byName.get(name.toLowerCase()),
    systemUnit: (system, quantity) => perSystem.get(system)?.get(quantity),
    quantityByUnit: new Map(units.map((u) => [u.externalId, u.quantity])),
  };
}

function readJson(name: string): unknown {
  return JSON.parse(readFileSync(new URL(name, UNIT_CATALOG_DIR), 'utf8'));
}

/** The shipped catalog, loaded with the module (so at start). */
export const unitCatalog: UnitCatalog = parseUnitCatalog(readJson('units.json'), readJson('unitSystems.json'));

/** The catalog unit `externalId` names; a 400 naming the place (`items[2].unitExternalId`) when there is none. */
export function requireUnit(externalId: string, path: ReadonlyArray<string | number>): Unit {
  const unit = unitCatalog.unit(externalId);
  if (!unit) throw badRequest(`${formatPath(path)}: ${JSON.stringify(externalId)} is not a unit of the units catalog (GET /units lists them)`);
  return unit;
}
