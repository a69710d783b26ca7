/**
 * Password hashing for locally kept accounts: bcrypt at cost 10 (Go's `bcrypt.DefaultCost`, which
 * Vault uses). `verifyPassword` always runs one bcrypt comparison — against a fixed dummy hash when
 * the account does not exist — so that response time does not reveal which user names exist.
 */
import bcrypt from 'bcryptjs';

export const BCRYPT_COST = 10;

/** A hash of a random password nobody knows, at the same cost, for comparisons with no account. */
const DUMMY_HASH = bcrypt.hashSync(`dummy-${Math.random()}-${Date.now()}`, BCRYPT_COST);

export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, BCRYPT_COST);
}

/** Whether `password` matches `hash`; false (after the same work) when there is no hash. */
export async function verifyPassword(password: string, hash: string | undefined): Promise<boolean> {
  const matches = await bcrypt.compare(password, hash ?? DUMMY_HASH);
  return matches && hash !== undefined;
}
