import { frameworkSuite } from './matrix-suite.ts';

frameworkSuite('autogen');
