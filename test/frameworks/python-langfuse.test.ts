import { frameworkSuite } from './matrix-suite.ts';

frameworkSuite('langfuse');
