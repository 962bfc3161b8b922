/** The tests' Redis Cluster: the module the bench shares (scripts/lib/redis-cluster.ts). */
export { startRedisCluster, type RedisCluster, type RedisClusterNode, type RedisClusterOptions } from '../../scripts/lib/redis-cluster.js';
