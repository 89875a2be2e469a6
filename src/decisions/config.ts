/** `policy:` of config/gateway.yaml: decision records, shadow evaluation and impact reports (this folder). Reloadable. */
import { Type } from '@sinclair/typebox';
import { Strict } from '../config/schema-kit.js';

export const PolicySettingsSchema = Strict(
  {
    decisionRetentionDays: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 3650,
        description:
          "How long each admission decision's record is kept in the store, in days (default 30). A receipt outlives its record; replaying it needs the record.",
      }),
    ),
    shadow: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'A candidate policy folder (laid out as a configuration root: policies/ with its built bundle, rules/, catalog/; relative to this root) evaluated beside the live policy on live traffic. It decides nothing; its disagreements are counted in portcullis_shadow_decisions_total and kept as decision records of kind shadow.',
      }),
    ),
    requireImpactReport: Type.Optional(
      Type.Boolean({
        description:
          'When true, a reload whose policy or rules differ from the live ones is refused (409 impact-report-required) until GET /admin/policy/impact has reported on exactly that candidate (default false).',
      }),
    ),
  },
  { description: 'Decision records, shadow evaluation and impact reports (src/decisions; docs/policy.md). Reloadable.' },
);
