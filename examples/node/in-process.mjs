// The ledger of examples/node/consumer.mjs as an in-process adapter: the same object, called
// by the harness directly instead of over stdio. `tidemark check --adapter
// examples/node/in-process.mjs` and `--command "node examples/node/consumer.mjs"` run the same
// worlds with the same seed to the same histories, so their cost per world can be compared.
import { ledger } from './ledger.mjs';

export default ledger;
