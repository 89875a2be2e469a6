/** What every console section gets: the session, an alert box for its errors, and a way to re-render. */
export interface Session {
  valid: boolean;
  username?: string;
  principalId?: string;
}

export interface SectionContext {
  session: Session;
  errorBox: HTMLElement;
  refresh: () => void;
}

export interface Section {
  title: string;
  render(into: HTMLElement, ctx: SectionContext): Promise<void>;
}
