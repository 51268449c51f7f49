import { parseKafkaSinkConfig } from '../../src/sinks/kafka/config.ts';
import { KafkaFindingSink } from '../../src/sinks/kafka/kafka-finding-sink.ts';
import { runFindingSinkContract } from '../contracts/finding-sink.contract.ts';
import { consumeMessages, kafkaForTests, uniqueTopic } from '../helpers/kafka.ts';

// Against the real broker at TRAJWATCH_TEST_KAFKA; skipped (with the reason) only outside CI.
const brokers = await kafkaForTests();

runFindingSinkContract({
  name: 'KafkaFindingSink',
  skip: brokers === undefined ? 'no Kafka broker (TRAJWATCH_TEST_KAFKA unset or unreachable)' : undefined,
  open: async (dir, { pendingLimitRecords }) => {
    const topics = { findings: uniqueTopic('contract.findings'), alarms: uniqueTopic('contract.alarms') };
    const config = parseKafkaSinkConfig({ brokers, topics, createTopics: true, topicPartitions: 1, maxOutboxRecords: pendingLimitRecords });
    return {
      sink: await KafkaFindingSink.open(config, { outboxDir: dir }),
      // One partition per topic: the topic's order is the acknowledged order.
      readBack: async (stream, count) => (await consumeMessages(brokers!, [topics[stream]], count, 8_000)).map((m) => JSON.parse(m.value)),
    };
  },
});
