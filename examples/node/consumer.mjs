// A correct at-least-once consumer in plain Node, speaking the tidemark protocol over stdio:
// the ledger of ledger.mjs (read it for the design), served by the client of client.mjs.
import { serve } from './client.mjs';
import { ledger } from './ledger.mjs';

// Everything the ledger keeps lives inside run(), so a session crash drops all of it.
serve({ ...ledger, sessions: true });
