/**
 * The matcher behind entity matching models: string-similarity features between the fields of a source and
 * a target, a score from them, and the fit of that score to confirmed matches.
 *
 * Tokens are the maximal runs of letters and the maximal runs of digits of a value ("PT-0012a" has "PT",
 * "0012" and "a"). Each feature is a cosine similarity in [0, 1] of two bags built from the tokens; the
 * feature type picks the bags, per pair of `matchFields`:
 * - simple: the tokens as written; insensitive: lower-cased tokens;
 * - bigram: simple, plus the character bigrams of the tokens;
 * - frequencyweightedbigram: the bigram features with each token and bigram weighted by its inverse document
 *   frequency over the entities being matched, so rare tokens count more;
 * - bigramextratokenizers: bigram, plus lower-cased tokens without leading zeros, the bigrams of the whole
 *   value lower-cased with everything but letters and digits removed, and the numbers (without leading zeros)
 *   and the words (lower-cased) each on their own, so that a fit can learn which of them tell matches apart;
 * - bigramcombo: every feature above.
 * Without confirmed matches the score is the mean of the features. With them, a logistic regression weighs
 * the features (the augmented classifiers also get that mean as one more feature), trained on the confirmed
 * pairs against the other targets their sources resemble most.
 */

export const FEATURE_TYPES = ['simple', 'insensitive', 'bigram', 'frequencyweightedbigram', 'bigramextratokenizers', 'bigramcombo'] as const;
export type FeatureType = (typeof FEATURE_TYPES)[number];
export const CLASSIFIERS = ['randomforest', 'decisiontree', 'logisticregression', 'augmentedlogisticregression', 'augmentedrandomforest'] as const;
export type Classifier = (typeof CLASSIFIERS)[number];

export interface MatchField {
  source: string;
  target: string;
}

export type Entity = Record<string, unknown>;

/** What a fit learns: the weights of the features (and of the mean, for augmented classifiers) and a bias. */
export interface Fitted {
  weights: number[];
  bias: number;
}

type Bag = Map<string, number>;
type Kind = 'tokens' | 'lower' | 'bigrams' | 'idfTokens' | 'idfBigrams' | 'plain' | 'joined' | 'numbers' | 'words';

const KINDS: Record<FeatureType, readonly Kind[]> = {
  simple: ['tokens'],
  insensitive: ['lower'],
  bigram: ['tokens', 'bigrams'],
  frequencyweightedbigram: ['idfTokens', 'idfBigrams'],
  bigramextratokenizers: ['tokens', 'bigrams', 'plain', 'joined', 'numbers', 'words'],
  bigramcombo: ['tokens', 'lower', 'bigrams', 'idfTokens', 'idfBigrams', 'plain', 'joined', 'numbers', 'words'],
};

const TOKEN = /\p{L}+|\p{N}+/gu;
const DIGITS = /^\p{N}+$/u;

export function tokens(value: string): string[] {
  return value.match(TOKEN) ?? [];
}

function bigramsOf(word: string, into: string[]): void {
  if (word.length === 1) into.push(word);
  for (let i = 0; i + 1 < word.length; i++) into.push(word.slice(i, i + 2));
}

/** The bags of one value, by kind (the weighted kinds are weighted later, against the whole population). */
interface Bags {
  tokens: string[];
  lower: string[];
  bigrams: string[];
  plain: string[];
  joined: string[];
  numbers: string[];
  words: string[];
}

function bagsOf(value: string): Bags {
  const t = tokens(value);
  const lower = t.map((x) => x.toLowerCase());
  const bigrams: string[] = [];
  for (const x of t) bigramsOf(x, bigrams);
  const joined: string[] = [];
  bigramsOf(lower.join(''), joined);
  const plain = lower.map((x) => (DIGITS.test(x) ? x.replace(/^0+(?=\d)/, '') : x));
  return { tokens: t, lower, bigrams, plain, joined, numbers: plain.filter((x) => DIGITS.test(x)), words: plain.filter((x) => !DIGITS.test(x)) };
}

function count(words: readonly string[], weight: (w: string) => number = () => 1): Bag {
  const bag: Bag = new Map();
  for (const w of words) bag.set(w, (bag.get(w) ?? 0) + weight(w));
  return bag;
}

function cosine(a: Bag, b: Bag): number {
  if (a.size === 0 || b.size === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (const [k, v] of a) {
    na += v * v;
    const w = b.get(k);
    if (w !== undefined) dot += v * w;
  }
  for (const v of b.values()) nb += v * v;
  return dot === 0 ? 0 : Math.min(1, dot / Math.sqrt(na * nb));
}

/** The value of a field as matching reads it: a string, or the empty string (only strings are considered). */
export function fieldValue(entity: Entity, name: string): string {
  const v = entity[name];
  return typeof v === 'string' ? v : '';
}

/** Entities handled between two turns of the event loop: a large population does not hold up requests. */
const CHUNK = 500;

/** `fn` of each item, letting other work run every CHUNK items, and stopping when `signal` aborts. */
async function mapYielding<T, R>(items: readonly T[], fn: (item: T, i: number) => R, signal?: AbortSignal): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % CHUNK === 0) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    }
    out.push(fn(items[i], i));
  }
  return out;
}

/** The features of every (source, target) pair of one population, and the bigram index that finds candidates. */
export class Population {
  private readonly kinds: readonly Kind[];
  private sourceBags: Bag[][][] = [];
  private targetBags: Bag[][][] = [];
  private readonly index = new Map<string, number[]>();

  private constructor(
    readonly sources: readonly Entity[],
    readonly targets: readonly Entity[],
    readonly fields: readonly MatchField[],
    featureType: FeatureType,
  ) {
    this.kinds = KINDS[featureType];
  }

  static async build(sources: readonly Entity[], targets: readonly Entity[], fields: readonly MatchField[], featureType: FeatureType, signal?: AbortSignal): Promise<Population> {
    const p = new Population(sources, targets, fields, featureType);
    const sourceRaw = await mapYielding(sources, (s) => fields.map((f) => bagsOf(fieldValue(s, f.source))), signal);
    const targetRaw = await mapYielding(targets, (t) => fields.map((f) => bagsOf(fieldValue(t, f.target))), signal);
    // Inverse document frequency over both sides, each entity one document.
    const df = new Map<string, number>();
    await mapYielding([...sourceRaw, ...targetRaw], (entity) => {
      const seen = new Set<string>();
      for (const b of entity) for (const w of [...b.tokens, ...b.bigrams.map((x) => `#${x}`)]) seen.add(w);
      for (const w of seen) df.set(w, (df.get(w) ?? 0) + 1);
    }, signal);
    const n = sourceRaw.length + targetRaw.length;
    const idf = (w: string) => Math.log((1 + n) / (1 + (df.get(w) ?? 0))) + 1;
    const bags = (b: Bags): Bag[] =>
      p.kinds.map((k) => {
        if (k === 'idfTokens') return count(b.tokens, idf);
        if (k === 'idfBigrams') return count(b.bigrams, (w) => idf(`#${w}`));
        return count(b[k]);
      });
    p.sourceBags = await mapYielding(sourceRaw, (e) => e.map(bags), signal);
    p.targetBags = await mapYielding(targetRaw, (e) => e.map(bags), signal);
    await mapYielding(targetRaw, (entity, i) => {
      const keys = new Set<string>();
      for (const b of entity) for (const w of [...b.joined, ...b.lower]) keys.add(w);
      for (const k of keys) {
        const list = p.index.get(k);
        if (list) list.push(i);
        else p.index.set(k, [i]);
      }
    }, signal);
    return p;
  }

  features(source: number, target: number): number[] {
    const out: number[] = [];
    const s = this.sourceBags[source];
    const t = this.targetBags[target];
    for (let f = 0; f < this.fields.length; f++) for (let k = 0; k < this.kinds.length; k++) out.push(cosine(s[f][k], t[f][k]));
    return out;
  }

  /** The targets that share a lower-cased token or bigram with the source: no other target can resemble it. */
  candidates(source: number): number[] {
    const found = new Set<number>();
    for (const f of this.fields) {
      const b = bagsOf(fieldValue(this.sources[source], f.source));
      for (const k of [...b.joined, ...b.lower]) for (const i of this.index.get(k) ?? []) found.add(i);
    }
    return [...found].sort((a, b) => a - b);
  }
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));
const augmented = (classifier: Classifier) => classifier.startsWith('augmented');

function inputs(features: number[], classifier: Classifier): number[] {
  return augmented(classifier) ? [...features, mean(features)] : features;
}

/** The score of a pair's features: their mean unsupervised, the fitted regression's probability otherwise. */
export function score(features: number[], fitted: Fitted | null, classifier: Classifier): number {
  if (!fitted) return mean(features);
  const x = inputs(features, classifier);
  let z = fitted.bias;
  for (let i = 0; i < x.length; i++) z += fitted.weights[i] * x[i];
  return sigmoid(z);
}

/** Negatives per confirmed source: the other targets it resembles most. */
const NEGATIVES_PER_SOURCE = 20;
const EPOCHS = 400;
const RATE = 0.5;
const L2 = 0.01;

/**
 * Fits the regression to the confirmed pairs (indexes into the population's sources and targets). Every
 * other candidate target of a confirmed source is a negative, the most resembling ones first; positives
 * and negatives weigh the same in total.
 */
export async function fit(population: Population, pairs: ReadonlyArray<[number, number]>, classifier: Classifier, signal?: AbortSignal): Promise<Fitted> {
  const positives = new Set(pairs.map(([s, t]) => `${s}:${t}`));
  const xs: number[][] = [];
  const ys: number[] = [];
  for (const [s, t] of pairs) {
    xs.push(inputs(population.features(s, t), classifier));
    ys.push(1);
  }
  await mapYielding([...new Set(pairs.map(([s]) => s))], (s) => {
    const others = population
      .candidates(s)
      .filter((t) => !positives.has(`${s}:${t}`))
      .map((t) => population.features(s, t))
      .sort((a, b) => mean(b) - mean(a))
      .slice(0, NEGATIVES_PER_SOURCE);
    for (const f of others) {
      xs.push(inputs(f, classifier));
      ys.push(0);
    }
  }, signal);
  const width = xs[0].length;
  const nPos = ys.filter((y) => y === 1).length;
  const nNeg = ys.length - nPos;
  const weightOf = (y: number) => (y === 1 ? ys.length / (2 * nPos) : nNeg ? ys.length / (2 * nNeg) : 0);
  const w = new Array<number>(width).fill(0);
  let b = 0;
  for (let epoch = 0; epoch < EPOCHS; epoch++) {
    // An epoch reads every sample once: others' work runs between epochs.
    await new Promise<void>((resolve) => setImmediate(resolve));
    signal?.throwIfAborted();
    const gw = new Array<number>(width).fill(0);
    let gb = 0;
    for (let i = 0; i < xs.length; i++) {
      let z = b;
      for (let j = 0; j < width; j++) z += w[j] * xs[i][j];
      const err = (sigmoid(z) - ys[i]) * weightOf(ys[i]);
      for (let j = 0; j < width; j++) gw[j] += err * xs[i][j];
      gb += err;
    }
    for (let j = 0; j < width; j++) w[j] -= RATE * (gw[j] / xs.length + L2 * w[j]);
    b -= RATE * (gb / xs.length);
  }
  return { weights: w, bias: b };
}

/**
 * The matches of one source. The reference names the entities `source` and `target`; the JavaScript
 * client's types read them as `matchFrom` and `matchTo`, so both names are given.
 */
interface Prediction {
  source: Entity;
  matchFrom: Entity;
  matches: Array<{ score: number; target: Entity; matchTo: Entity }>;
}

/** For each source, its best `numMatches` targets scoring at least `threshold` (and above 0), best first. */
export function predict(
  population: Population,
  fitted: Fitted | null,
  classifier: Classifier,
  numMatches: number,
  threshold: number,
  signal?: AbortSignal,
): Promise<Prediction[]> {
  return mapYielding(population.sources, (source, s) => {
    const scored = population
      .candidates(s)
      .map((t) => ({ t, score: score(population.features(s, t), fitted, classifier) }))
      .filter((m) => m.score > 0 && m.score >= threshold)
      .sort((a, b) => b.score - a.score || a.t - b.t)
      .slice(0, numMatches);
    return { source, matchFrom: source, matches: scored.map((m) => ({ score: m.score, target: population.targets[m.t], matchTo: population.targets[m.t] })) };
  }, signal);
}
