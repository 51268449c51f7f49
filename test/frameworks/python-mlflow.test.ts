import { frameworkSuite } from './matrix-suite.ts';

frameworkSuite('mlflow');
