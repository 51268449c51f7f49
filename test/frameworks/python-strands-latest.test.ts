import { frameworkSuite } from './matrix-suite.ts';

frameworkSuite('strands-latest');
