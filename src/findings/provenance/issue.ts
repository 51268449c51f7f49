/** Something provenance could not take as given: recorded with its reason, never dropped silently. */
export interface ProvenanceIssue {
  reason: 'treatment-declaration-invalid' | 'bundle-id-conflict' | 'snapshot-id-conflict';
  detail: string;
}
