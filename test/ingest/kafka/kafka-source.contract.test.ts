import { Kafka } from 'kafkajs';
import { KafkaSourceConfigSchema } from '../../../src/ingest/kafka/config.ts';
import { KafkaSource } from '../../../src/ingest/kafka/source.ts';
import { type DeliverySource, runSourceDeliveryContract } from '../../contracts/source-delivery.contract.ts';
import { kafkaForTests, uniqueTopic, quietKafka } from '../../helpers/kafka.ts';

const brokers = await kafkaForTests();

/** The Kafka source on a topic of its own (one partition, so records keep their order), fed by a real producer. */
const kafkaSource: DeliverySource = {
  name: 'Kafka source',
  skip: brokers === undefined ? 'no Kafka broker' : undefined,
  async start(target) {
    const kafka = quietKafka('source-contract', brokers);
    const topic = uniqueTopic('source.contract');
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    const config = KafkaSourceConfigSchema.parse({
      brokers,
      topic,
      groupId: uniqueTopic('group'),
      deadLetterTopic: `${topic}.dlq`,
      commitIntervalMs: 100,
      admissionRetryMs: 20,
    });
    const source = await KafkaSource.start(config, target, { log: () => {} });
    return {
      send: async (body) => void (await producer.send({ topic, messages: [{ value: Buffer.from(body) }] })),
      close: async () => {
        await source.stop();
        await producer.disconnect();
      },
    };
  },
};

runSourceDeliveryContract(kafkaSource);
