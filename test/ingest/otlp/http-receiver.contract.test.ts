import { runSourceContract } from '../../contracts/source.contract.ts';
import { httpTransport } from '../../contracts/otlp-transports.ts';

runSourceContract(httpTransport);
