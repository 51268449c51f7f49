import { frameworkSuite } from './matrix-suite.ts';

frameworkSuite('openlit-langchain');
