import { frameworkSuite } from './matrix-suite.ts';

frameworkSuite('pydantic-ai');
