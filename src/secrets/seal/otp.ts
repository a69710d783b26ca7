/**
 * The encoding of a generated root token for the operator who started generate-root: the token's
 * bytes XOR the one-time password's bytes (equal lengths), in standard base64 without padding.
 */
export const OTP_LENGTH = 28;

export function encodeToken(token: string, otp: string): string {
  const a = Buffer.from(token, 'utf8');
  const b = Buffer.from(otp, 'utf8');
  if (a.length !== b.length) throw new Error('the token and the OTP must have the same length');
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out.toString('base64').replace(/=+$/, '');
}

export function decodeToken(encoded: string, otp: string): string {
  const a = Buffer.from(encoded.trim(), 'base64');
  const b = Buffer.from(otp, 'utf8');
  if (a.length !== b.length) throw new Error('the encoded token and the OTP have different lengths');
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out.toString('utf8');
}
