import { WILDCARD } from './topic-pattern.js';

/**
 * Values indexed by the decoded tokens of a topic pattern, so that a topic finds the values whose
 * pattern it matches without visiting the others (issue 14; the shape of nats-server's sublist).
 *
 * Patterns with a wildcard live in a trie with one level per token: each node has a map of literal
 * children and one wildcard child for `*`, and a value sits in the node its pattern's last token
 * leads to. A pattern matches only topics of its own token count (docs/design/rules/schema-and-validation.md §8.2), so a topic of n tokens
 * collects the values of the nodes at depth n it reaches; a one-token pattern (the bare base of an
 * empty `key_order`, D19) sits at depth 1 and matches only the bare-base topic. There is no `>`
 * branch: patterns never end in a multi-token wildcard. Matching follows at each depth the literal
 * child named by the token and the wildcard child, so it visits only the nodes on those paths.
 *
 * Patterns without a wildcard (a watch that names every key: one topic) skip the trie: they sit in
 * one map keyed by their tokens joined with NUL, found with one lookup instead of one per token.
 * With many watchers the trie's levels are cache misses, and this is the common case. The key is
 * unambiguous for the tokens it stores (see `exactKey`).
 *
 * Adding and removing cost O(depth); a removal prunes every node and key it leaves empty, so the
 * index holds nothing for patterns no longer registered.
 */
export class SubscriptionIndex<T> {
  private readonly root: TrieNode<T> = newNode(undefined, '');
  private readonly exact = new Map<string, Slot<T>>();
  /** Every live entry, in registration order. */
  private readonly entries = new Set<IndexEntry<T>>();
  private nextOrder = 0;

  get size(): number {
    return this.entries.size;
  }

  add(tokens: readonly string[], value: T): IndexEntry<T> {
    const key = exactKeyOfPattern(tokens);
    let entry: IndexEntry<T>;
    if (key !== undefined) {
      entry = new IndexEntry(value, this.nextOrder++, key, this);
      this.exact.set(key, withEntry(this.exact.get(key), entry));
    } else {
      const node = this.trieNode(tokens);
      entry = new IndexEntry(value, this.nextOrder++, node, this);
      node.values = withEntry(node.values, entry);
    }
    this.entries.add(entry);
    return entry;
  }

  private trieNode(tokens: readonly string[]): TrieNode<T> {
    let node = this.root;
    for (const token of tokens) {
      if (token === WILDCARD) {
        node.wildcard ??= newNode(node, token);
        node = node.wildcard;
      } else {
        node.literals ??= new Map();
        let child = node.literals.get(token);
        if (!child) {
          child = newNode(node, token);
          node.literals.set(token, child);
        }
        node = child;
      }
    }
    return node;
  }

  /**
   * The entries whose pattern matches the decoded topic tokens, in registration order (the order
   * a scan of every registration visited them). A fresh array: entries added or removed while
   * the caller walks it do not change it, so callers check `active` before using an entry.
   */
  match(tokens: readonly string[]): IndexEntry<T>[] {
    if (this.entries.size === 0 || tokens.length === 0) return [];
    const found: Slot<T>[] = [];
    if (this.exact.size > 0) {
      const slot = this.exact.get(exactKeyOfTopic(tokens));
      if (slot !== undefined) found.push(slot);
    }
    if (this.root.literals !== undefined || this.root.wildcard !== undefined) collect(this.root, tokens, 0, found);
    if (found.length === 0) return [];
    if (found.length === 1) {
      const only = found[0] as Slot<T>;
      return only instanceof IndexEntry ? [only] : [...only];
    }
    const merged: IndexEntry<T>[] = [];
    for (const slot of found) {
      if (slot instanceof IndexEntry) merged.push(slot);
      else for (const entry of slot) merged.push(entry);
    }
    return merged.sort((a, b) => a.order - b.order);
  }

  /** Removes every entry and returns them in registration order. */
  clear(): IndexEntry<T>[] {
    const removed = [...this.entries];
    for (const entry of removed) entry.remove();
    return removed;
  }

  /**
   * Trie nodes below the root plus exact-pattern keys, counted by walking what is held (not from a
   * counter), so tests see what really remains after removals.
   */
  nodeCount(): number {
    return countBelow(this.root) + this.exact.size;
  }

  /** @internal Called by `IndexEntry.remove` only. */
  detach(entry: IndexEntry<T>, home: Home<T>): void {
    this.entries.delete(entry);
    if (typeof home === 'string') {
      const rest = withoutEntry(this.exact.get(home), entry);
      if (rest === undefined) this.exact.delete(home);
      else this.exact.set(home, rest);
      return;
    }
    home.values = withoutEntry(home.values, entry);
    if (home.values !== undefined) return;
    let current: TrieNode<T> | undefined = home;
    while (current?.parent && isEmptyNode(current)) {
      const parent: TrieNode<T> = current.parent;
      if (current.token === WILDCARD) parent.wildcard = undefined;
      else {
        parent.literals?.delete(current.token);
        if (parent.literals?.size === 0) parent.literals = undefined;
      }
      current = parent;
    }
  }
}

/** A registered value; `remove` is idempotent and O(depth). */
export class IndexEntry<T> {
  private removed = false;

  constructor(
    readonly value: T,
    /** Registration order, to merge the values of several places as a scan would have met them. */
    readonly order: number,
    private readonly home: Home<T>,
    private readonly index: SubscriptionIndex<T>,
  ) {}

  get active(): boolean {
    return !this.removed;
  }

  /** True when this call removed the entry, false when it was already gone. */
  remove(): boolean {
    if (this.removed) return false;
    this.removed = true;
    this.index.detach(this, this.home);
    return true;
  }
}

const NUL = '\u0000';

/**
 * The exact map's key of a wildcard-free pattern, `undefined` for one that belongs in the trie (a
 * wildcard, or a NUL inside a token). See `exactKeyOfTopic`.
 */
function exactKeyOfPattern(tokens: readonly string[]): string | undefined {
  for (const token of tokens) if (token === WILDCARD || token.includes(NUL)) return undefined;
  return exactKeyOfTopic(tokens);
}

/**
 * The token count, then the tokens, joined with NUL. A topic's key equals a stored pattern's only
 * when the tokens are the same: the counts must be equal (digits before the first NUL), and
 * splitting the pattern's key at NUL gives back its tokens, so a topic with a NUL inside a token
 * would split into more tokens than its count says.
 */
function exactKeyOfTopic(tokens: readonly string[]): string {
  return `${tokens.length}${NUL}${tokens.join(NUL)}`;
}

/** One entry held alone (the common case: one watcher per topic), or several in registration order. */
type Slot<T> = IndexEntry<T> | Set<IndexEntry<T>>;

function withEntry<T>(slot: Slot<T> | undefined, entry: IndexEntry<T>): Slot<T> {
  if (slot === undefined) return entry;
  if (slot instanceof IndexEntry) return new Set([slot, entry]);
  slot.add(entry);
  return slot;
}

function withoutEntry<T>(slot: Slot<T> | undefined, entry: IndexEntry<T>): Slot<T> | undefined {
  if (slot === undefined || slot === entry) return undefined;
  if (slot instanceof IndexEntry) return slot;
  slot.delete(entry);
  if (slot.size > 1) return slot;
  // Back to a lone entry, so a topic whose other watchers left reads as cheaply as before.
  return slot.size === 1 ? slot.values().next().value : undefined;
}

interface TrieNode<T> {
  readonly parent: TrieNode<T> | undefined;
  /** The token leading here from the parent (`*` for the wildcard child; no literal child is named `*`). */
  readonly token: string;
  /** Created on first use: most nodes are leaves. */
  literals: Map<string, TrieNode<T>> | undefined;
  wildcard: TrieNode<T> | undefined;
  /** The entries whose pattern ends here. */
  values: Slot<T> | undefined;
}

/** Where an entry is held: its key in the exact map, or its trie node. */
type Home<T> = string | TrieNode<T>;

function newNode<T>(parent: TrieNode<T> | undefined, token: string): TrieNode<T> {
  return { parent, token, literals: undefined, wildcard: undefined, values: undefined };
}

function isEmptyNode<T>(node: TrieNode<T>): boolean {
  return node.values === undefined && node.literals === undefined && node.wildcard === undefined;
}

function collect<T>(node: TrieNode<T>, tokens: readonly string[], depth: number, found: Slot<T>[]): void {
  if (depth === tokens.length) {
    if (node.values !== undefined) found.push(node.values);
    return;
  }
  // A topic token that is literally `*` (stored as `%2A`) is a value: only the wildcard branch
  // selects it, since no literal child is ever named `*` (S3).
  const literal = node.literals?.get(tokens[depth] as string);
  if (literal !== undefined) collect(literal, tokens, depth + 1, found);
  if (node.wildcard !== undefined) collect(node.wildcard, tokens, depth + 1, found);
}

function countBelow<T>(node: TrieNode<T>): number {
  let count = 0;
  if (node.literals) for (const child of node.literals.values()) count += 1 + countBelow(child);
  if (node.wildcard) count += 1 + countBelow(node.wildcard);
  return count;
}
