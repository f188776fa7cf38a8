#!/usr/bin/env node
// source-faros-buggy.mjs: source-faros.mjs with one realistic bug, the `>` cursor on a
// timestamp that is not unique. It resumes from its bookmark itself (`updated_after` = the
// newest `updated_at` read), as most sources do, and checkpoints every
// `state_checkpoint_interval` records with the framework's mid-stream STATE, so that a failed
// sync does not read everything again. But records share timestamps: a checkpoint taken
// between two records of the same second, and a sync resumed from it asks for the records
// after that second, never reading the rest of it. tidemark catches it as a premature
// watermark: a later STATE claims the records it skipped.
//
// Check it with tidemark:  npx tidemark check --airbyte "node source-faros-buggy.mjs" --api api-faros.json
import { AirbyteSourceLogger, AirbyteSourceRunner } from 'faros-airbyte-cdk';
import { Events, EventsSource } from './source-faros.mjs';

class CheckpointedEvents extends Events {
  get stateCheckpointInterval() {
    return this.config.state_checkpoint_interval ?? 1000;
  }

  updatedAfter(state) {
    return state.updated_at;
  }
}

class CheckpointedEventsSource extends EventsSource {
  streams(config) {
    return [new CheckpointedEvents(config, this.logger)];
  }
}

const logger = new AirbyteSourceLogger();
new AirbyteSourceRunner(logger, new CheckpointedEventsSource(logger)).mainCommand().parseAsync(process.argv);
