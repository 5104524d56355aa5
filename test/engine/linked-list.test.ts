import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LinkedList, type Linked } from '../../src/engine/linked-list.js';

interface Item extends Linked<Item> {
  readonly name: string;
}

const item = (name: string): Item => ({ name, prev: undefined, next: undefined, listed: false });
const names = (list: LinkedList<Item>): string[] => list.snapshot().map((entry) => entry.name);

describe('LinkedList', () => {
  it('keeps entries in the order they were appended, and counts them', () => {
    const list = new LinkedList<Item>();
    for (const name of ['a', 'b', 'c']) list.append(item(name));
    assert.deepEqual(names(list), ['a', 'b', 'c']);
    assert.equal(list.size, 3);
    assert.equal(list.head?.name, 'a');
  });

  it('removes the head, the tail and the middle, and refuses what is not listed', () => {
    const list = new LinkedList<Item>();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(item) as [Item, Item, Item, Item];
    for (const entry of [a, b, c, d]) list.append(entry);
    assert.equal(list.remove(b), true);
    assert.equal(list.remove(a), true);
    assert.equal(list.remove(d), true);
    assert.equal(list.remove(d), false);
    assert.deepEqual(names(list), ['c']);
    assert.equal(list.size, 1);
    list.append(d); // appended again after its removal
    assert.deepEqual(names(list), ['c', 'd']);
    assert.equal(list.remove(c) && list.remove(d), true);
    assert.equal(list.head, undefined);
    assert.equal(list.size, 0);
  });
});
