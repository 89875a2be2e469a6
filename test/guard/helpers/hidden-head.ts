/**
 * A candidate head with a hidden layer (the seventh round's and later) is what the trainer writes today: its file
 * records this corpus, these encoder weights and evasive lines, the thresholds it was written at, the hidden layer's
 * setting, the linear ask head its class scores are averaged with (and that head's sha256), and the gate and reading of
 * the head it was built beside. Each round's test adds what differs (its backstop) on the head this returns.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { extraLines, HIDDEN_PARAMS, readCorpus } from '../../../scripts/train-guard-intent.js';
import { encoderFiles } from '../../../src/guard/model/encoder.js';
import type { IntentHeadDoc } from '../../../src/guard/model/head.js';
import { RULES_DIR } from './guardrails.js';

const headText = (f: string): string => readFileSync(`${RULES_DIR}${f}`, 'utf8');
export const readHead = (f: string): IntentHeadDoc => JSON.parse(headText(f)) as IntentHeadDoc;
export const headSha256 = (f: string): string => createHash('sha256').update(headText(f)).digest('hex');

/** A candidate of a round: its file, its hidden layer (units, seeds), INTENT_ASK_AVERAGE's weight, the thresholds it was written at. */
export interface HiddenCandidate {
  file: string;
  units: number;
  seeds: number;
  weight: number;
  threshold: number;
  classThresholds?: Record<string, number>;
}

export function expectHiddenHeadAsWritten(
  c: HiddenCandidate,
  /** INTENT_EVASIVE, the linear ask head it is averaged with, and the head whose gate and reading it keeps. */
  built: { evasive: string; averagedWith: string; beside: string },
): IntentHeadDoc {
  const head = readHead(c.file);
  const beside = readHead(built.beside);
  const evaluation = head.evaluation as {
    threshold: number;
    averagedWith?: { from: string; sha256: string; weight: number };
    hidden?: { units: number; epochs: number; l2: number; seeds?: number };
  };
  expect(head.corpusSha256).to.equal(readCorpus().sha256);
  expect(head.encoderSha256).to.equal(encoderFiles().sha256);
  expect(head.extraLinesSha256).to.equal(extraLines(built.evasive, undefined).sha256);
  expect(head.classThresholds).to.deep.equal(c.classThresholds);
  expect(evaluation.threshold).to.equal(c.threshold);
  expect(evaluation.hidden).to.deep.equal({ units: c.units, ...HIDDEN_PARAMS, ...(c.seeds > 1 ? { seeds: c.seeds } : {}) });
  expect(evaluation.averagedWith).to.deep.equal({ from: built.averagedWith, sha256: headSha256(built.averagedWith), weight: c.weight });
  // The trained units of every seed and, per class, the two that carry the averaged head's linear score.
  expect(head.hidden?.weights.length).to.equal(c.units * c.seeds + 2 * head.classes.length);
  expect(head.gate).to.deep.equal(beside.gate);
  expect(head.readings).to.deep.equal(beside.readings);
  return head;
}
