import { accountRows } from '../../../src/keys/accounts';
import { openWarehouse, type Warehouse } from '../../../src/warehouse/connection';
import { DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { testDataDir } from '../support/service';
import { cliWith, tempKeyFile } from '../../unit/keys/support';

export { tempKeyFile };

let warehouse: Promise<Warehouse> | undefined;
/** The suite's demo data, opened by this process (so no other can open it), for the CLI's account check. */
export function testWarehouse(): Promise<Warehouse> {
  warehouse ??= openWarehouse({ kind: 'chdb', dataDir: testDataDir(), database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
  return warehouse;
}
/** Lets another process open the suite's data; the next testWarehouse() opens it again. */
async function closeTestWarehouse(): Promise<void> {
  const opened = warehouse;
  warehouse = undefined;
  await (await opened)?.close();
}
afterAll(closeTestWarehouse);

/** Runs the CLI in-process on `file`, checking accounts against the suite's demo data, collecting what it prints. */
export const cli = (file: string, argv: string[], now?: Date) => cliWith(async (account) => accountRows(await testWarehouse(), account), file, argv, now);
