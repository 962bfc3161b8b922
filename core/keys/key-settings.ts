import type { InjectionToken } from 'tsyringe';

/**
 * A section of a key's free-form settings (`settings.<name>`) that a plugin reads, with the check that
 * keeps bad values out: the admin API and the CLI run it before they store the section, so a mistake
 * is refused when an operator makes it rather than when a client calls.
 */
export interface KeySettingsSection {
  /** The section's name: the member of a key's `settings` it owns (`security`). */
  readonly name: string;
  /** The problems of `value` as this section, each prefixed with `where` (`settings.security.origins[0]: ...`); empty when it is fine. */
  check(value: unknown, where: string): string[];
}

/** Multi: every {@link KeySettingsSection} that plugins registered. */
export const KeySettingsSectionToken = Symbol.for('tollgate.KeySettingsSection') as InjectionToken<KeySettingsSection>;
