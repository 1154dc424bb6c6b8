import type { ChangeChannel } from '../db/connect.js';

/**
 * Where a process hears that another one changed something it caches (db/connect.ts
 * `watchChanges`): modules subscribe per channel and forget what they hold.
 */
export class ChangeFeed {
  private readonly handlers = new Map<ChangeChannel, Array<(id?: string) => void>>();

  on(channel: ChangeChannel, handler: (id?: string) => void): void {
    const list = this.handlers.get(channel) ?? [];
    list.push(handler);
    this.handlers.set(channel, list);
  }

  readonly emit = (channel: ChangeChannel, id?: string): void => {
    for (const handler of this.handlers.get(channel) ?? []) handler(id);
  };
}
