import { frameworkSuite } from './matrix-suite.ts';

frameworkSuite('openllmetry-langchain');
