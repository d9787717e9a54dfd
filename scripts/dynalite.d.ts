// dynalite ships no types; this is the part of its API the project uses.
declare module 'dynalite' {
  import type { Server } from 'node:http';

  interface DynaliteOptions {
    /** How long tables stay CREATING / DELETING / UPDATING; 500 ms by default. */
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    /** A LevelDB folder; in memory when absent. */
    path?: string;
  }

  function dynalite(options?: DynaliteOptions): Server;
  export = dynalite;
}
