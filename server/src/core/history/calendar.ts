/**
 * The calendar arithmetic of the canonical event time `YYYY-MM-DDTHH:mm:ss.sssZ`, shared by the
 * two readers of a log line: history.ts reads the fields from text, eventBytes.ts from bytes.
 * Pure; integer arithmetic throughout (a NaN in a field made every field of the time a double).
 */

/**
 * True when the fields read from a time are in the range the fast readers accept: each two-digit
 * pair a number (a reader gives a non-digit pair as a large negative number, which fails here),
 * a year from 100, and a day up to the 28th. Anything else is left to `Date.parse`, so that a fast
 * reader never has to know month lengths or leap years, and its result always prints back as the
 * same characters.
 */
export function isCanonicalTimeFields(century: number, yearOfCentury: number, month: number, day: number, hour: number, minute: number, second: number, millisecond: number): boolean {
  const year = century * 100 + yearOfCentury;
  return century >= 0 && yearOfCentury >= 0 && year >= 100 && month >= 1 && month <= 12 && day >= 1 && day <= 28 && hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 59 && millisecond >= 0;
}

/** Milliseconds since the epoch of a time of day on the day `days` after 1970-01-01. */
export function timeOnDay(days: number, hour: number, minute: number, second: number, millisecond: number): number {
  return days * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + millisecond;
}

/**
 * Days from 1970-01-01 to the given proleptic Gregorian date (month 1–12), for years ≥ 1: the
 * arithmetic Date.UTC does, without the call (H. Hinnant's days_from_civil). history.ts
 * `parseTime` is compared with `Date.parse` by a unit test on random dates.
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
