// oidc-provider ships no type declarations; the test drives it through its documented constructor and listen().
declare module 'oidc-provider' {
  const Provider: new (issuer: string, configuration: Record<string, unknown>) => { listen(port: number): import('node:http').Server };
  export default Provider;
}
