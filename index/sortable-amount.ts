// Exact amounts as text whose byte order is their numeric order, so SQLite can compare, sort and index
// bigints of any size we accept without turning them into doubles.
//
//   non-negative n:  'p' + two-digit length of n + the digits of n          1250 -> "p041250"
//   negative n:      'n' + (99 - length of |n|) + each digit d as (9 - d)   -1250 -> "n958749"
//
// 'n' sorts before 'p'. Among non-negatives a longer number is larger and equal lengths compare digit by
// digit. Among negatives a longer magnitude is smaller (its length field is lower) and equal lengths
// compare by complemented digits, which reverses the order as it must. Up to 99 digits.

export const AMOUNT_DIGITS_MAX = 99;

export function amountKey(value: bigint): string {
  if (value >= 0n) {
    const digits = value.toString();
    if (digits.length > AMOUNT_DIGITS_MAX) throw new RangeError(`amount has more than ${AMOUNT_DIGITS_MAX} digits`);
    return 'p' + String(digits.length).padStart(2, '0') + digits;
  }
  const digits = (-value).toString();
  if (digits.length > AMOUNT_DIGITS_MAX) throw new RangeError(`amount has more than ${AMOUNT_DIGITS_MAX} digits`);
  let complemented = '';
  for (let index = 0; index < digits.length; index += 1) complemented += String(57 - digits.charCodeAt(index));
  return 'n' + String(AMOUNT_DIGITS_MAX - digits.length).padStart(2, '0') + complemented;
}

export function amountFromKey(key: string): bigint {
  const digits = key.slice(3);
  if (key[0] === 'p') return BigInt(digits);
  let restored = '';
  for (let index = 0; index < digits.length; index += 1) restored += String(57 - digits.charCodeAt(index));
  return -BigInt(restored);
}
