import { WILDCARD } from './topic-pattern.js';

/**
 * Values indexed by the decoded tokens of a topic pattern, so that a topic finds the values whose
 * pattern it matches without visiting the others (issue 14; the shape of nats-server's sublist).
 *
 * A trie with one level per token. Each node has a map of literal children and one wildcard child
 * for `*`; a value sits in the node its pattern's last token leads to. A pattern matches only
 * topics of its own token count (§8.2), so a topic of n tokens collects the values of the nodes
 * at depth n it reaches, and a one-token pattern (the bare base of an empty `key_order`, D19) sits
 * at depth 1 and matches only the bare-base topic. There is no `>` branch: patterns never end in
 * a multi-token wildcard.
 *
 * Matching follows at each depth the literal child named by the token and the wildcard child, so
 * it visits at most the nodes on those paths: with literal patterns, one path of n nodes. Adding
 * and removing cost O(depth); a removal prunes every node it leaves empty, so the trie holds
 * nothing for patterns no longer registered.
 */
export class SubscriptionIndex<T> {
  private readonly root: TrieNode<T> = newNode(undefined, '', false);
  /** Every live entry, in registration order. */
  private readonly entries = new Set<IndexEntry<T>>();
  private nextOrder = 0;

  get size(): number {
    return this.entries.size;
  }

  add(tokens: readonly string[], value: T): IndexEntry<T> {
    let node = this.root;
    for (const token of tokens) {
      if (token === WILDCARD) {
        node.wildcard ??= newNode(node, token, true);
        node = node.wildcard;
      } else {
        node.literals ??= new Map();
        let child = node.literals.get(token);
        if (!child) {
          child = newNode(node, token, false);
          node.literals.set(token, child);
        }
        node = child;
      }
    }
    const entry = new IndexEntry(value, this.nextOrder++, node, this);
    (node.values ??= new Set()).add(entry);
    this.entries.add(entry);
    return entry;
  }

  /**
   * The entries whose pattern matches the decoded topic tokens, in registration order (the order
   * a scan of every registration visited them). A fresh array: entries added or removed while
   * the caller walks it do not change it, so callers check `active` before using an entry.
   */
  match(tokens: readonly string[]): IndexEntry<T>[] {
    if (this.entries.size === 0 || tokens.length === 0) return [];
    const found: Set<IndexEntry<T>>[] = [];
    collect(this.root, tokens, 0, found);
    if (found.length === 0) return [];
    if (found.length === 1) return [...(found[0] as Set<IndexEntry<T>>)];
    const merged: IndexEntry<T>[] = [];
    for (const values of found) for (const entry of values) merged.push(entry);
    return merged.sort((a, b) => a.order - b.order);
  }

  /** Every entry in registration order. */
  all(): IndexEntry<T>[] {
    return [...this.entries];
  }

  /** Removes every entry and returns them in registration order. */
  clear(): IndexEntry<T>[] {
    const removed = [...this.entries];
    for (const entry of removed) entry.remove();
    return removed;
  }

  /**
   * Nodes below the root, counted by walking the trie (not from a counter), so tests see what is
   * really held after removals.
   */
  nodeCount(): number {
    return countBelow(this.root);
  }

  /** @internal Called by `IndexEntry.remove` only. */
  detach(entry: IndexEntry<T>, node: TrieNode<T>): void {
    this.entries.delete(entry);
    node.values?.delete(entry);
    if (node.values?.size === 0) node.values = undefined;
    let current: TrieNode<T> | undefined = node;
    while (current?.parent && isEmptyNode(current)) {
      const parent: TrieNode<T> = current.parent;
      if (current.isWildcard) parent.wildcard = undefined;
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
    /** Registration order, to merge the values of several nodes as a scan would have met them. */
    readonly order: number,
    private readonly node: TrieNode<T>,
    private readonly index: SubscriptionIndex<T>,
  ) {}

  get active(): boolean {
    return !this.removed;
  }

  /** True when this call removed the entry, false when it was already gone. */
  remove(): boolean {
    if (this.removed) return false;
    this.removed = true;
    this.index.detach(this, this.node);
    return true;
  }
}

interface TrieNode<T> {
  readonly parent: TrieNode<T> | undefined;
  /** The token leading here from the parent (`*` for a wildcard child). */
  readonly token: string;
  readonly isWildcard: boolean;
  /** Created on first use: most nodes of distinct topics are leaves. */
  literals: Map<string, TrieNode<T>> | undefined;
  wildcard: TrieNode<T> | undefined;
  /** The entries whose pattern ends here, in registration order. */
  values: Set<IndexEntry<T>> | undefined;
}

function newNode<T>(parent: TrieNode<T> | undefined, token: string, isWildcard: boolean): TrieNode<T> {
  return { parent, token, isWildcard, literals: undefined, wildcard: undefined, values: undefined };
}

function isEmptyNode<T>(node: TrieNode<T>): boolean {
  return node.values === undefined && node.literals === undefined && node.wildcard === undefined;
}

function collect<T>(node: TrieNode<T>, tokens: readonly string[], depth: number, found: Set<IndexEntry<T>>[]): void {
  if (depth === tokens.length) {
    if (node.values !== undefined && node.values.size > 0) found.push(node.values);
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
