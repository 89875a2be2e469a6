/**
 * Help on every command: `--help`, `-h` or a trailing `help` prints that command's usage on stdout and
 * exits 0 (not Node's "Unknown option" or exit 2), and `portcullis admin` alone lists the admin commands.
 */
import { expect } from 'chai';
import { cli } from '../helpers/cli.js';

describe('portcullis --help', function () {
  this.timeout(60_000);

  const cases: Array<[string[], string]> = [
    [['--help'], 'portcullis passkey sign-in'],
    [['-h'], 'portcullis check'],
    [['check', '--help'], 'portcullis check [--root DIR]'],
    [['admin'], 'portcullis admin token issue'],
    [['admin', 'token', '-h'], 'portcullis admin token revoke <tokenId>'],
    [['admin', 'principal', 'grant', '--help'], 'portcullis admin principal grant <principal> --rung'],
    [['receipt', 'verify', '--help'], 'portcullis receipt verify <file>'],
    [['receipt', 'audit', '-h'], 'portcullis receipt audit --from'],
    [['passkey', 'sign-in', '--help'], 'portcullis passkey sign-in --key FILE'],
    [['recovery', 'help'], 'portcullis recovery new-phrase'],
    [['decision', 'replay', '--help'], 'portcullis decision replay <receipt.json | receipt id>'],
    [['policy', 'impact', '-h'], 'portcullis policy impact [--candidate DIR] [--since 24h]'],
  ];
  for (const [args, line] of cases) {
    it(`portcullis ${args.join(' ')}`, async () => {
      const run = await cli(args);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stderr).to.equal('');
      expect(run.stdout).to.match(/^usage:\n/);
      expect(run.stdout).to.contain(line);
      if (args[0] === 'admin') expect(run.stdout).to.not.contain('portcullis passkey');
    });
  }

  it('an unknown command is named in one line before the usage, exit 2', async () => {
    const run = await cli(['frobnicate']);
    expect(run.code).to.equal(2);
    expect(run.stderr.split('\n')[0]).to.equal('portcullis: unknown command: frobnicate');
  });
});
