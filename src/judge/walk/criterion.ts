import type { WalkLayer } from '../../findings/schema.ts';

/**
 * A criterion the walk must be able to answer before it may stop: something the evidence so
 * far raised that only a deeper layer can settle. `answerable: false` names the layer it needs.
 */
export interface Criterion {
  id: string;
  answerable: boolean;
  /**
   * Computed: `l0-candidate:error-output@<span>`, `failed-tool@<span>`, `incomplete-capture:...`,
   * `silenced-check:<pattern>:<gap>`, `capture-gap:<gap>@<spans>`.
   */
  reason: string;
  needs?: Exclude<WalkLayer, 'L0' | 'L1'>;
}
