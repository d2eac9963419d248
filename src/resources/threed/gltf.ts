/**
 * Reading a glTF 2.0 file (the JSON `.gltf`, or the binary `.glb` container whose first chunk is that JSON)
 * into a revision's node tree. Only the JSON is read: names, the node hierarchy, each node's transform, and
 * the `min`/`max` every POSITION accessor must carry, so neither buffers nor their URIs are opened.
 *
 * The tree has one root: the scene (the file's default scene, else its first, else every node no node lists
 * as a child), named after it, or `RootNode` when it has no name. Nodes follow in depth-first order, children
 * in the order their parent lists them; a node's bounding box is that of its subtree's geometry in the
 * scene's coordinates (each mesh's box through its node's world transform), null when the subtree has none.
 * A node's properties are its `extras`: an object value is a category of properties, any other value goes in
 * the category `extras`; values are given as strings.
 */
import { isObject } from '../../http/validation.js';

export class GltfError extends Error {}

export interface TreeNode {
  treeIndex: number;
  /** The tree index of the parent; undefined for the root. */
  parent?: number;
  depth: number;
  name: string;
  subtreeSize: number;
  properties: Record<string, Record<string, string>> | null;
  boundingBox: { min: number[]; max: number[] } | null;
}

type Matrix = number[];

const GLB_MAGIC = 0x46546c67; // "glTF"
const JSON_CHUNK = 0x4e4f534a; // "JSON"

const IDENTITY: Matrix = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];

/** Column-major 4×4 product a·b. */
function multiply(a: Matrix, b: Matrix): Matrix {
  const out = new Array<number>(16);
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 4; r++) {
      let sum = 0;
      for (let k = 0; k < 4; k++) sum += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = sum;
    }
  }
  return out;
}

const isNumbers = (v: unknown, n: number): v is number[] => Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'number' && Number.isFinite(x));

/** The node's local transform: its `matrix`, or translation · rotation · scale. */
function localMatrix(node: Record<string, unknown>, at: string): Matrix {
  if (node.matrix !== undefined) {
    if (!isNumbers(node.matrix, 16)) throw new GltfError(`${at}.matrix: expected 16 numbers`);
    return node.matrix;
  }
  const t = node.translation ?? [0, 0, 0];
  const q = node.rotation ?? [0, 0, 0, 1];
  const s = node.scale ?? [1, 1, 1];
  if (!isNumbers(t, 3)) throw new GltfError(`${at}.translation: expected 3 numbers`);
  if (!isNumbers(q, 4)) throw new GltfError(`${at}.rotation: expected a quaternion of 4 numbers`);
  if (!isNumbers(s, 3)) throw new GltfError(`${at}.scale: expected 3 numbers`);
  const [x, y, z, w] = q;
  const r = [
    1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w),
    2 * (x * y - z * w), 1 - 2 * (x * x + z * z), 2 * (y * z + x * w),
    2 * (x * z + y * w), 2 * (y * z - x * w), 1 - 2 * (x * x + y * y),
  ];
  return [r[0] * s[0], r[1] * s[0], r[2] * s[0], 0, r[3] * s[1], r[4] * s[1], r[5] * s[1], 0, r[6] * s[2], r[7] * s[2], r[8] * s[2], 0, t[0], t[1], t[2], 1];
}

/** The box of the 8 corners of `min`–`max` through `m`. */
function transformBox(m: Matrix, min: number[], max: number[]): { min: number[]; max: number[] } {
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  for (let corner = 0; corner < 8; corner++) {
    const p = [corner & 1 ? max[0] : min[0], corner & 2 ? max[1] : min[1], corner & 4 ? max[2] : min[2]];
    for (let r = 0; r < 3; r++) {
      const v = m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r];
      lo[r] = Math.min(lo[r], v);
      hi[r] = Math.max(hi[r], v);
    }
  }
  return { min: lo, max: hi };
}

function union(a: { min: number[]; max: number[] } | null, b: { min: number[]; max: number[] } | null) {
  if (!a) return b;
  if (!b) return a;
  return { min: a.min.map((v, i) => Math.min(v, b.min[i])), max: a.max.map((v, i) => Math.max(v, b.max[i])) };
}


const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function propertiesOf(extras: unknown): Record<string, Record<string, string>> | null {
  if (!isObject(extras)) return null;
  const out: Record<string, Record<string, string>> = {};
  for (const [key, value] of Object.entries(extras)) {
    if (isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, text(v)]));
    else (out.extras ??= {})[key] = text(value);
  }
  return Object.keys(out).length ? out : null;
}

/** The JSON of a `.glb` (its first chunk) or a `.gltf`; anything else is a GltfError saying what it is not. */
function documentOf(content: Buffer): Record<string, unknown> {
  let json: string;
  if (content.length >= 12 && content.readUInt32LE(0) === GLB_MAGIC) {
    const version = content.readUInt32LE(4);
    if (version !== 2) throw new GltfError(`a binary glTF (.glb) of version ${version}; only version 2 is read`);
    if (content.length < 20) throw new GltfError('a binary glTF (.glb) without its JSON chunk');
    const length = content.readUInt32LE(12);
    if (content.readUInt32LE(16) !== JSON_CHUNK) throw new GltfError('a binary glTF (.glb) whose first chunk is not JSON');
    if (20 + length > content.length) throw new GltfError('a binary glTF (.glb) whose JSON chunk runs past the end of the file');
    json = content.subarray(20, 20 + length).toString('utf8');
  } else {
    json = content.toString('utf8');
    if (!/^\s*\{/.test(json)) throw new GltfError('not a glTF file: neither a binary glTF (.glb) nor glTF JSON (.gltf)');
  }
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (error) {
    throw new GltfError(`the glTF JSON does not parse: ${(error as Error).message}`);
  }
  if (!isObject(doc) || !isObject(doc.asset) || typeof doc.asset.version !== 'string') throw new GltfError('not a glTF file: it has no asset.version');
  if (!doc.asset.version.startsWith('2.')) throw new GltfError(`glTF version ${doc.asset.version}; only version 2 is read`);
  return doc;
}

const listOf = (doc: Record<string, unknown>, name: string): unknown[] => {
  const v = doc[name];
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new GltfError(`${name}: expected a list`);
  return v;
};

function indexList(v: unknown, size: number, at: string): number[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((i) => Number.isInteger(i) && i >= 0 && i < size)) throw new GltfError(`${at}: expected indexes of nodes (0 to ${size - 1})`);
  return v as number[];
}

/** The local box of mesh `index`: the union of its primitives' POSITION accessors' min and max. */
function meshBox(doc: Record<string, unknown>, index: unknown, at: string): { min: number[]; max: number[] } | null {
  if (index === undefined) return null;
  const meshes = listOf(doc, 'meshes');
  const accessors = listOf(doc, 'accessors');
  const mesh = Number.isInteger(index) ? meshes[index as number] : undefined;
  if (!isObject(mesh)) throw new GltfError(`${at}.mesh: there is no mesh ${JSON.stringify(index)}`);
  let box: { min: number[]; max: number[] } | null = null;
  for (const [p, primitive] of (Array.isArray(mesh.primitives) ? mesh.primitives : []).entries()) {
    const position = isObject(primitive) && isObject(primitive.attributes) ? primitive.attributes.POSITION : undefined;
    if (position === undefined) continue;
    const accessor = Number.isInteger(position) ? accessors[position as number] : undefined;
    const where = `meshes[${index}].primitives[${p}].attributes.POSITION`;
    if (!isObject(accessor)) throw new GltfError(`${where}: there is no accessor ${JSON.stringify(position)}`);
    if (!isNumbers(accessor.min, 3) || !isNumbers(accessor.max, 3)) throw new GltfError(`accessors[${position}]: a POSITION accessor must give min and max of 3 numbers`);
    box = union(box, { min: accessor.min, max: accessor.max });
  }
  return box;
}

/** The revision's node tree in tree-index order, or a GltfError saying why the content is not one. */
export function readTree(content: Buffer, maxNodes: number): TreeNode[] {
  const doc = documentOf(content);
  const nodes = listOf(doc, 'nodes');
  if (nodes.length + 1 > maxNodes) throw new GltfError(`the file has ${nodes.length} nodes; a revision holds at most ${maxNodes - 1}`);
  const children = nodes.map((n, i) => {
    if (!isObject(n)) throw new GltfError(`nodes[${i}]: expected an object`);
    return indexList(n.children, nodes.length, `nodes[${i}].children`);
  });
  const scenes = listOf(doc, 'scenes');
  const sceneIndex = doc.scene ?? (scenes.length ? 0 : undefined);
  let scene: Record<string, unknown> | undefined;
  let roots: number[];
  if (sceneIndex !== undefined) {
    const s = Number.isInteger(sceneIndex) ? scenes[sceneIndex as number] : undefined;
    if (!isObject(s)) throw new GltfError(`scene: there is no scene ${JSON.stringify(sceneIndex)}`);
    scene = s;
    roots = indexList(s.nodes, nodes.length, `scenes[${sceneIndex}].nodes`);
  } else {
    const listed = new Set(children.flat());
    roots = nodes.map((_, i) => i).filter((i) => !listed.has(i));
  }

  const out: TreeNode[] = [{ treeIndex: 0, depth: 0, name: typeof scene?.name === 'string' && scene.name ? scene.name : 'RootNode', subtreeSize: 1, properties: propertiesOf(scene?.extras), boundingBox: null }];
  const seen = new Set<number>();
  // Depth-first without recursion, so a deep hierarchy cannot exhaust the stack.
  const stack: Array<{ node: number; parent: number; world: Matrix }> = roots.map((node) => ({ node, parent: 0, world: IDENTITY })).reverse();
  while (stack.length) {
    const { node, parent, world: parentWorld } = stack.pop()!;
    const at = `nodes[${node}]`;
    if (seen.has(node)) throw new GltfError(`${at}: the node is reached twice (a node has one parent, and the hierarchy has no cycles)`);
    seen.add(node);
    const n = nodes[node] as Record<string, unknown>;
    const world = multiply(parentWorld, localMatrix(n, at));
    const local = meshBox(doc, n.mesh, at);
    const treeIndex = out.length;
    out.push({
      treeIndex,
      parent,
      depth: out[parent].depth + 1,
      name: typeof n.name === 'string' ? n.name : `Node ${node}`,
      subtreeSize: 1,
      properties: propertiesOf(n.extras),
      boundingBox: local && transformBox(world, local.min, local.max),
    });
    for (const child of [...children[node]].reverse()) stack.push({ node: child, parent: treeIndex, world });
  }
  // Children come after their parents, so one pass from the end gives each subtree's size and box.
  for (let i = out.length - 1; i > 0; i--) {
    const p = out[out[i].parent!];
    p.subtreeSize += out[i].subtreeSize;
    p.boundingBox = union(p.boundingBox, out[i].boundingBox);
  }
  return out;
}
