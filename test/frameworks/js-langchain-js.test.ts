import { jsFrameworkSuite } from './js/js-suite.ts';

jsFrameworkSuite('langchain-js');
