// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

// A vault written for the tests (no npm package ships MetaMorpho's bytecode): it answers
// MetaMorpho v1.1's views and emits its events in their exact layout, and lends into Morpho
// Blue as MetaMorpho does (supply on behalf of itself, to the first market of its supply queue).
// Its rules are only what the tests drive: no ERC-4626 share accounting, no allocator role.

struct VaultMarketParams {
    address loanToken;
    address collateralToken;
    address oracle;
    address irm;
    uint256 lltv;
}

interface IVaultToken {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function approve(address spender, uint256 amount) external returns (bool);
}

interface IVaultMorpho {
    function supply(VaultMarketParams memory marketParams, uint256 assets, uint256 shares, address onBehalf, bytes memory data)
        external
        returns (uint256, uint256);
}

contract TestMetaMorpho {
    struct MarketConfig {
        uint184 cap;
        bool enabled;
        uint64 removableAt;
    }

    struct PendingUint192 {
        uint192 value;
        uint64 validAt;
    }

    struct PendingAddress {
        address value;
        uint64 validAt;
    }

    address public immutable MORPHO;
    address public immutable asset;
    string public name;
    string public symbol;
    address public owner;
    address public curator;
    address public guardian;
    address public feeRecipient;
    uint96 public fee;
    uint256 public timelock;
    uint256 public lostAssets;
    PendingUint192 public pendingTimelock;
    PendingAddress public pendingGuardian;
    mapping(bytes32 => MarketConfig) public config;
    mapping(bytes32 => PendingUint192) public pendingCap;
    mapping(bytes32 => VaultMarketParams) internal params;
    bytes32[] public supplyQueue;
    bytes32[] public withdrawQueue;

    event Deposit(address indexed sender, address indexed owner, uint256 assets, uint256 shares);
    event SubmitCap(address indexed caller, bytes32 indexed id, uint256 cap);
    event SetCap(address indexed caller, bytes32 indexed id, uint256 cap);
    event SubmitMarketRemoval(address indexed caller, bytes32 indexed id);
    event SetSupplyQueue(address indexed caller, bytes32[] newSupplyQueue);
    event SetWithdrawQueue(address indexed caller, bytes32[] newWithdrawQueue);
    event SubmitTimelock(uint256 newTimelock);
    event SetTimelock(address indexed caller, uint256 newTimelock);
    event SubmitGuardian(address indexed newGuardian);
    event SetGuardian(address indexed caller, address indexed guardian);
    event SetCurator(address indexed newCurator);
    event SetFee(address indexed caller, uint256 newFee);
    event SetFeeRecipient(address indexed newFeeRecipient);

    constructor(
        address morpho,
        address initialOwner,
        uint256 initialTimelock,
        address asset_,
        string memory name_,
        string memory symbol_
    ) {
        MORPHO = morpho;
        owner = initialOwner;
        timelock = initialTimelock;
        asset = asset_;
        name = name_;
        symbol = symbol_;
        IVaultToken(asset_).approve(morpho, type(uint256).max);
    }

    function supplyQueueLength() external view returns (uint256) {
        return supplyQueue.length;
    }

    function withdrawQueueLength() external view returns (uint256) {
        return withdrawQueue.length;
    }

    function setCurator(address newCurator) external {
        curator = newCurator;
        emit SetCurator(newCurator);
    }

    function setFee(uint256 newFee) external {
        fee = uint96(newFee);
        emit SetFee(msg.sender, newFee);
    }

    function setFeeRecipient(address newFeeRecipient) external {
        feeRecipient = newFeeRecipient;
        emit SetFeeRecipient(newFeeRecipient);
    }

    function submitGuardian(address newGuardian) external {
        if (guardian == address(0)) {
            guardian = newGuardian;
            emit SetGuardian(msg.sender, newGuardian);
        } else {
            pendingGuardian = PendingAddress(newGuardian, uint64(block.timestamp + timelock));
            emit SubmitGuardian(newGuardian);
        }
    }

    function submitTimelock(uint256 newTimelock) external {
        if (newTimelock > timelock) {
            timelock = newTimelock;
            emit SetTimelock(msg.sender, newTimelock);
        } else {
            pendingTimelock = PendingUint192(uint192(newTimelock), uint64(block.timestamp + timelock));
            emit SubmitTimelock(newTimelock);
        }
    }

    function submitCap(VaultMarketParams memory marketParams, uint256 newSupplyCap) external {
        bytes32 id = keccak256(abi.encode(marketParams));
        params[id] = marketParams;
        if (newSupplyCap < config[id].cap) {
            _setCap(id, uint184(newSupplyCap));
        } else {
            pendingCap[id] = PendingUint192(uint192(newSupplyCap), uint64(block.timestamp + timelock));
            emit SubmitCap(msg.sender, id, newSupplyCap);
        }
    }

    function acceptCap(VaultMarketParams memory marketParams) external {
        bytes32 id = keccak256(abi.encode(marketParams));
        require(pendingCap[id].validAt != 0 && block.timestamp >= pendingCap[id].validAt, "not yet");
        _setCap(id, uint184(pendingCap[id].value));
        delete pendingCap[id];
    }

    function submitMarketRemoval(VaultMarketParams memory marketParams) external {
        bytes32 id = keccak256(abi.encode(marketParams));
        require(config[id].cap == 0, "cap");
        config[id].removableAt = uint64(block.timestamp + timelock);
        emit SubmitMarketRemoval(msg.sender, id);
    }

    function setSupplyQueue(bytes32[] calldata newSupplyQueue) external {
        supplyQueue = newSupplyQueue;
        emit SetSupplyQueue(msg.sender, newSupplyQueue);
    }

    /// Supplies `assets` to the first market of the supply queue, on behalf of the vault.
    function deposit(uint256 assets, address receiver) external returns (uint256) {
        IVaultToken(asset).transferFrom(msg.sender, address(this), assets);
        IVaultMorpho(MORPHO).supply(params[supplyQueue[0]], assets, 0, address(this), "");
        emit Deposit(msg.sender, receiver, assets, assets);
        return assets;
    }

    function _setCap(bytes32 id, uint184 cap) internal {
        config[id].cap = cap;
        if (cap > 0 && !config[id].enabled) {
            config[id].enabled = true;
            withdrawQueue.push(id);
            emit SetWithdrawQueue(msg.sender, withdrawQueue);
        }
        emit SetCap(msg.sender, id, cap);
    }
}

contract TestMetaMorphoFactory {
    address public immutable MORPHO;
    mapping(address => bool) public isMetaMorpho;

    event CreateMetaMorpho(
        address indexed metaMorpho,
        address indexed caller,
        address initialOwner,
        uint256 initialTimelock,
        address indexed asset,
        string name,
        string symbol,
        bytes32 salt
    );

    constructor(address morpho) {
        MORPHO = morpho;
    }

    function createMetaMorpho(
        address initialOwner,
        uint256 initialTimelock,
        address asset,
        string memory name,
        string memory symbol,
        bytes32 salt
    ) external returns (address metaMorpho) {
        metaMorpho = address(new TestMetaMorpho{salt: salt}(MORPHO, initialOwner, initialTimelock, asset, name, symbol));
        isMetaMorpho[metaMorpho] = true;
        emit CreateMetaMorpho(metaMorpho, msg.sender, initialOwner, initialTimelock, asset, name, symbol, salt);
    }
}
