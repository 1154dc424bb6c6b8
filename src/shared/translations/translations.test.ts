import { describe, expect, it } from 'vitest';
import { translationStatus } from './index.js';

describe('translationStatus (decisions G10)', () => {
  const source = { locale: 'en', fields: { name: 'Shoes', description: 'Nice shoes', image: null } };

  it('lists every enabled locale: the source complete, absent ones missing', () => {
    expect(translationStatus(source, [], ['en', 'de', 'fr'])).toEqual({ en: { status: 'complete' }, de: { status: 'missing' }, fr: { status: 'missing' } });
  });

  it('is partial when a field filled in the source is empty in the member, complete otherwise', () => {
    const members = [
      { locale: 'de', fields: { name: 'Schuhe', description: '', image: null } },
      { locale: 'fr', fields: { name: 'Chaussures', description: 'Belles', image: null } },
    ];
    expect(translationStatus(source, members, ['en', 'de', 'fr'])).toEqual({
      en: { status: 'complete' },
      de: { status: 'partial' },
      fr: { status: 'complete' },
    });
  });

  it('is partial when the member is unpublished where the source is published', () => {
    const pub = { ...source, published: true };
    const members = [
      { locale: 'de', fields: source.fields, published: false },
      { locale: 'fr', fields: source.fields, published: true },
    ];
    expect(translationStatus(pub, members, ['en', 'de', 'fr'])).toEqual({ en: { status: 'complete' }, de: { status: 'partial' }, fr: { status: 'complete' } });
  });

  it('ignores members in locales that are no longer enabled', () => {
    const members = [{ locale: 'it', fields: source.fields }];
    expect(translationStatus(source, members, ['en'])).toEqual({ en: { status: 'complete' } });
  });
});
