// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

/// A price feed that answers Chainlink's AggregatorV3Interface, for the local-chain tests: the
/// owner publishes rounds; each round is stamped with the block's time.
contract TestAggregator {
    uint8 public immutable decimals;
    string public description;
    uint256 public constant version = 4;
    uint80 public latestRound;
    mapping(uint80 => int256) public answers;
    mapping(uint80 => uint256) public updatedAts;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);
    event NewRound(uint256 indexed roundId, address indexed startedBy, uint256 startedAt);

    constructor(uint8 decimals_, string memory description_, int256 answer) {
        decimals = decimals_;
        description = description_;
        updateAnswer(answer);
    }

    function updateAnswer(int256 answer) public {
        latestRound++;
        answers[latestRound] = answer;
        updatedAts[latestRound] = block.timestamp;
        emit NewRound(latestRound, msg.sender, block.timestamp);
        emit AnswerUpdated(answer, latestRound, block.timestamp);
    }

    function getRoundData(uint80 roundId) public view returns (uint80, int256, uint256, uint256, uint80) {
        require(updatedAts[roundId] != 0, "No data present");
        return (roundId, answers[roundId], updatedAts[roundId], updatedAts[roundId], roundId);
    }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        return getRoundData(latestRound);
    }

    /// The legacy AggregatorInterface getters, which Aave's AaveOracle reads.
    function latestAnswer() external view returns (int256) {
        return answers[latestRound];
    }

    function latestTimestamp() external view returns (uint256) {
        return updatedAts[latestRound];
    }
}
