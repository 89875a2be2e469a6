/**
 * Identity-provider links: which account an OpenID Connect identity (issuer + subject) names. A link names
 * the account — the provider's verified name and e-mail shown beside it — and is made only by a principal
 * already signed in with one of its own methods (passkey, wallet), which is what proves the account. A link
 * is never a way to sign in: the gateway keeps no password and takes no sign-in from a third party.
 *
 * One identity names one account (the first link stands); a principal holds at most one link, replaced
 * by a newer one of its own. Implementations: redis-store.ts and memory-store.ts; one contract suite
 * (test/identity-links/contract.test.ts).
 */

export interface IdentityLink {
  issuer: string;
  subject: string;
  /** The provider's name for the person (`preferred_username`, else `name`, else `email`), when it gives one. */
  name: string | null;
  /** The e-mail the provider vouches for (`email` with `email_verified` true), else null. */
  email: string | null;
  linkedAt: string;
}

export interface IdentityLinkStore {
  /**
   * Links the identity to the principal unless it names another principal: answers the principal it
   * names afterwards. Atomic: of racing links of one identity, one principal wins. The principal's
   * previous link, if any, is released.
   */
  link(principalId: string, link: IdentityLink): Promise<string>;
  /** The principal's link, or null. */
  linkOf(principalId: string): Promise<IdentityLink | null>;
}

/** The key an identity is held under: its issuer and subject, which together are unique (OIDC Core 5.7). */
export function identityKey(issuer: string, subject: string): string {
  return `${issuer}#${subject}`;
}
