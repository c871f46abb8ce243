// `scontrol show node -o` as Slurm 22.05 prints it (captured from Debian 12's slurmctld), read
// by rdma-eventd-slurm (slurm/node_state.h).
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "node_state.h"

namespace slurm_node_state_test {

using rdma_eventd_slurm::NodeParse;
using rdma_eventd_slurm::NodeState;
using rdma_eventd_slurm::parse_node_state;

// Captured from `scontrol show node -o testnode` (slurmctld 22.05.8).
const char* const kSlurmIdleNode =
    "NodeName=testnode Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 "
    "CPULoad=1.73 AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 "
    "NodeHostName=testnode Version=22.05.8 OS=Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0  "
    "RealMemory=1000 AllocMem=0 FreeMem=18505 Sockets=2 Boards=1 State=IDLE ThreadsPerCore=1 "
    "TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=debug  BootTime=2026-11-28T07:10:28 "
    "SlurmdStartTime=2026-11-28T10:26:42 LastBusyTime=2026-11-28T10:26:42 "
    "CfgTRES=cpu=2,mem=1000M,billing=2 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 "
    "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n";
const char* const kSlurmDrainedNode =
    "NodeName=testnode Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 "
    "CPULoad=1.73 AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 "
    "NodeHostName=testnode Version=22.05.8 OS=Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0  "
    "RealMemory=1000 AllocMem=0 FreeMem=18505 Sockets=2 Boards=1 State=IDLE+DRAIN "
    "ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=debug  "
    "BootTime=2026-11-28T07:10:28 SlurmdStartTime=2026-11-28T10:26:42 "
    "LastBusyTime=2026-11-28T10:26:42 CfgTRES=cpu=2,mem=1000M,billing=2 AllocTRES= CapWatts=n/a "
    "CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s "
    "Reason=rdma-eventd: mlx5_0/1 flapping (3 downs) [root@2026-11-28T10:26:43]\n";
const char* const kSlurmDownNode =
    "NodeName=testnode Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 "
    "NodeAddr=127.0.0.1 NodeHostName=testnode Version=22.05.8 RealMemory=1000 AllocMem=0 "
    "State=DOWN+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
    "Partitions=debug  CfgTRES=cpu=2,mem=1000M,billing=2 AllocTRES= CapWatts=n/a "
    "Reason=admin x [root@2026-11-28T10:26:43]\n";
const char* const kSlurmNodeNotFound = "Node nosuch not found\n";

TEST(SlurmNodeState, ReadsAnIdleNodeAsSlurmPrintsIt) {
  NodeState s;
  ASSERT_EQ(parse_node_state(kSlurmIdleNode, "testnode", s), NodeParse::kOk);
  EXPECT_EQ(s, (NodeState{"testnode", "IDLE", {}, "", "debug"}));
}

TEST(SlurmNodeState, ANodeAskedForByItsHostNameIsReadUnderItsNodeName) {
  // NodeName=gpu17 on host h-17: `scontrol show node -o h-17` answers with gpu17's line, and
  // every update must name gpu17.
  const std::string line =
      "NodeName=gpu17 Arch=x86_64 NodeAddr=10.0.0.17 NodeHostName=h-17 State=MIXED "
      "Partitions=gpu,all\n";
  NodeState s;
  ASSERT_EQ(parse_node_state(line, "h-17", s), NodeParse::kOk);
  EXPECT_EQ(s, (NodeState{"gpu17", "MIXED", {}, "", "gpu,all"}));
  // A NodeName match wins over another line's NodeHostName; two lines with the host name are
  // no answer.
  ASSERT_EQ(parse_node_state("NodeName=a NodeHostName=b State=IDLE\nNodeName=b NodeHostName=c "
                             "State=DOWN\n",
                             "b", s),
            NodeParse::kOk);
  EXPECT_EQ(s.name, "b");
  EXPECT_EQ(s.base, "DOWN");
  EXPECT_EQ(parse_node_state("NodeName=a NodeHostName=h State=IDLE\nNodeName=b NodeHostName=h "
                             "State=IDLE\n",
                             "h", s),
            NodeParse::kUnreadable);
}

TEST(SlurmNodeState, ReadsADrainAndItsReasonWithoutSlurmsUserAndTime) {
  NodeState s;
  ASSERT_EQ(parse_node_state(kSlurmDrainedNode, "testnode", s), NodeParse::kOk);
  EXPECT_EQ(
      s, (NodeState{
             "testnode", "IDLE", {"DRAIN"}, "rdma-eventd: mlx5_0/1 flapping (3 downs)", "debug"}));
  ASSERT_EQ(parse_node_state(kSlurmDownNode, "testnode", s), NodeParse::kOk);
  EXPECT_EQ(s, (NodeState{"testnode", "DOWN", {"DRAIN"}, "admin x", "debug"}));
  EXPECT_TRUE(s.down());
}

TEST(SlurmNodeState, TheReasonEndsBeforeCommentAndExtra) {
  // Slurm prints Comment= and Extra= after the reason's [user@time] when they are set.
  const std::string drained(kSlurmDrainedNode, std::strlen(kSlurmDrainedNode) - 1);
  const std::string want = "rdma-eventd: mlx5_0/1 flapping (3 downs)";
  const std::string tails[] = {
      " Comment=moved to rack 7 [by ops]",
      " Extra={\"rack\": 7}",
      " Comment=swap [x@y] Extra=a b",
      "\r",
  };
  for (const std::string& tail : tails) {
    NodeState s;
    ASSERT_EQ(parse_node_state(drained + tail + "\n", "testnode", s), NodeParse::kOk) << tail;
    EXPECT_EQ(s.reason, want) << tail;
  }
  // A reason without Slurm's [user@time] still ends at Comment=.
  NodeState s;
  ASSERT_EQ(
      parse_node_state("NodeName=n1 State=IDLE+DRAIN Reason=admin: swap Comment=rack 7", "n1", s),
      NodeParse::kOk);
  EXPECT_EQ(s.reason, "admin: swap");
}

TEST(SlurmNodeState, TellsAnUnknownNodeFromUnreadableText) {
  NodeState s;
  EXPECT_EQ(parse_node_state(kSlurmNodeNotFound, "nosuch", s), NodeParse::kNotFound);
  EXPECT_EQ(parse_node_state(kSlurmIdleNode, "othernode", s), NodeParse::kUnreadable);
  EXPECT_EQ(parse_node_state("slurm_load_node error: Unable to contact slurm controller", "n1", s),
            NodeParse::kUnreadable);
  EXPECT_EQ(parse_node_state("NodeName=n1 Arch=x86_64\n", "n1", s), NodeParse::kUnreadable);
}

}  // namespace slurm_node_state_test
