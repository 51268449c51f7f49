import { AssignerProtocol, type Assignment, type PartitionAssigner } from 'kafkajs';

/** The protocol name every member of a group advertises (kafkajs's own assigner is `RoundRobinAssigner`). */
export const CO_PARTITIONED_ASSIGNER = 'CoPartitionedAssigner';

/**
 * Partition p of every subscribed topic to one member: the members sorted by id, partition p to
 * the member at `p % members`. Topics keyed alike (spans and logs by trace id, with the same
 * partition count) then meet in one consumer, as Kafka Streams requires of co-partitioned
 * inputs. kafkajs's round robin deals the partitions of all topics in one sequence, so p of the
 * second topic usually lands elsewhere. With one topic both assign the same.
 *
 * @example
 * kafka.consumer({ groupId, partitionAssigners: [coPartitionedAssigner] });
 */
export const coPartitionedAssigner: PartitionAssigner = ({ cluster }) => ({
  name: CO_PARTITIONED_ASSIGNER,
  version: 0,
  async assign({ members, topics }) {
    const sorted = members.map((m) => m.memberId).sort();
    const assignment = new Map<string, Assignment>(sorted.map((id) => [id, {}]));
    for (const topic of topics) {
      for (const { partitionId } of cluster.findTopicPartitionMetadata(topic)) {
        const member = assignment.get(sorted[partitionId % sorted.length]!)!;
        (member[topic] ??= []).push(partitionId);
      }
    }
    for (const topics of assignment.values()) for (const partitions of Object.values(topics)) partitions.sort((a, b) => a - b);
    return [...assignment].map(([memberId, topicPartitions]) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: topicPartitions, userData: Buffer.alloc(0) }),
    }));
  },
  protocol({ topics }) {
    return { name: CO_PARTITIONED_ASSIGNER, metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) };
  },
});
