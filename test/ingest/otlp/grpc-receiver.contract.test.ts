import { runSourceContract } from '../../contracts/source.contract.ts';
import { grpcTransport } from '../../contracts/otlp-transports.ts';

runSourceContract(grpcTransport);
