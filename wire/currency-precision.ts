// How many minor units each currency has (ISO 4217), so a statement's `152.75 USD` becomes exactly 15275
// at precision 100. A currency that is not listed takes MINOR_UNITS_DEFAULT, and an amount with more
// decimals than its currency allows is refused rather than rounded.

/** Currencies whose minor unit is not the hundredth. */
const MINOR_UNITS: Readonly<Record<string, number>> = {
  // no minor unit
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0, VND: 0, VUV: 0, XAF: 0,
  XOF: 0, XPF: 0,
  // thousandths
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  // ten-thousandths
  CLF: 4, UYW: 4,
};

/** Everything else in ISO 4217 has two decimals. */
export const MINOR_UNITS_DEFAULT = 2;

export function minorUnitsOf(currency: string): number {
  return MINOR_UNITS[currency.toUpperCase()] ?? MINOR_UNITS_DEFAULT;
}

/** 10^(minor units): the precision external amounts in this currency are converted with. */
export function precisionOf(currency: string): bigint {
  return 10n ** BigInt(minorUnitsOf(currency));
}
