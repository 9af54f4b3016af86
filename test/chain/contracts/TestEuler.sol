// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

interface IERC20Like {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    function decimals() external view returns (uint8);
}

interface IVaultLike {
    function checkAccountStatus(address account, address[] calldata collaterals) external view returns (bytes4);
    function convertToAssets(uint256 shares) external view returns (uint256);
    function balanceOf(address account) external view returns (uint256);
}

interface IOracleLike {
    function getQuote(uint256 inAmount, address base, address quote) external view returns (uint256);
}

/// An Ethereum Vault Connector for the local-chain tests, written for them: accounts enable
/// collateral vaults and one controller vault; a vault asks for an account's status check, which
/// the connector runs on the account's controller and announces with the EVC's events
/// (AccountStatusCheck, CollateralStatus, ControllerStatus). An owner acts for its sub-accounts
/// (the addresses sharing its first 19 bytes): it enables their collaterals and controller, and
/// `call`s a vault on behalf of one, as the EVC's `call` does. No batches, no deferral, no operators.
contract TestEVC {
    event CollateralStatus(address indexed account, address indexed collateral, bool enabled);
    event ControllerStatus(address indexed account, address indexed controller, bool enabled);
    event AccountStatusCheck(address indexed account, address indexed controller);

    mapping(address => address[]) internal collaterals;
    mapping(address => address) internal controllerOf;
    /// The account a vault is called on behalf of, during `call` (else zero).
    address public currentOnBehalfOf;

    function haveCommonOwner(address a, address b) public pure returns (bool) {
        return (uint160(a) ^ uint160(b)) < 0x100;
    }

    /// Calls `target` on behalf of `account`, a sub-account of the caller's owner.
    function call(address target, address account, bytes calldata data) external returns (bytes memory) {
        require(haveCommonOwner(msg.sender, account), "not the owner");
        currentOnBehalfOf = account;
        (bool ok, bytes memory result) = target.call(data);
        currentOnBehalfOf = address(0);
        if (!ok) {
            assembly {
                revert(add(result, 32), mload(result))
            }
        }
        return result;
    }

    function getCollaterals(address account) external view returns (address[] memory) {
        return collaterals[account];
    }

    function getControllers(address account) external view returns (address[] memory list) {
        if (controllerOf[account] == address(0)) return new address[](0);
        list = new address[](1);
        list[0] = controllerOf[account];
    }

    function isCollateralEnabled(address account, address vault) public view returns (bool) {
        address[] storage list = collaterals[account];
        for (uint256 i = 0; i < list.length; i++) if (list[i] == vault) return true;
        return false;
    }

    function isControllerEnabled(address account, address vault) external view returns (bool) {
        return controllerOf[account] == vault;
    }

    function enableCollateral(address account, address vault) external {
        require(haveCommonOwner(msg.sender, account), "not the account");
        if (isCollateralEnabled(account, vault)) return;
        collaterals[account].push(vault);
        emit CollateralStatus(account, vault, true);
    }

    function disableCollateral(address account, address vault) external {
        require(msg.sender == account, "not the account");
        address[] storage list = collaterals[account];
        for (uint256 i = 0; i < list.length; i++)
            if (list[i] == vault) {
                list[i] = list[list.length - 1];
                list.pop();
                emit CollateralStatus(account, vault, false);
                requireAccountStatusCheck(account);
                return;
            }
    }

    function enableController(address account, address vault) external {
        require(haveCommonOwner(msg.sender, account), "not the account");
        require(controllerOf[account] == address(0) || controllerOf[account] == vault, "one controller");
        if (controllerOf[account] == vault) return;
        controllerOf[account] = vault;
        emit ControllerStatus(account, vault, true);
        requireAccountStatusCheck(account);
    }

    /// Called by the controller vault itself, once the account owes it nothing.
    function disableController(address account) external {
        require(controllerOf[account] == msg.sender, "not the controller");
        controllerOf[account] = address(0);
        emit ControllerStatus(account, msg.sender, false);
    }

    function requireAccountStatusCheck(address account) public {
        address controller = controllerOf[account];
        if (controller == address(0)) return;
        require(
            IVaultLike(controller).checkAccountStatus(account, collaterals[account]) ==
                IVaultLike.checkAccountStatus.selector,
            "account unhealthy"
        );
        emit AccountStatusCheck(account, controller);
    }
}

/// An Euler v2 vault (EVault) for the local-chain tests, written for them: ERC-4626 shares of one
/// asset, borrowing through the connector with EVault's debt bookkeeping (owed in 2^31 units of
/// the asset, grown by an interest accumulator in ray), per-collateral LTVs (borrow, liquidation;
/// 1e4 scale), the vault's oracle and unit of account, EVault's liquidity views, liquidation with
/// a discount and debt socialization, and EVault's events. The rate is set, not modelled; no fees
/// accrue to shares, no caps, no hooks.
contract TestEVault {
    event Transfer(address indexed from, address indexed to, uint256 value);
    event Deposit(address indexed sender, address indexed owner, uint256 assets, uint256 shares);
    event Withdraw(
        address indexed sender,
        address indexed receiver,
        address indexed owner,
        uint256 assets,
        uint256 shares
    );
    event Borrow(address indexed account, uint256 assets);
    event Repay(address indexed account, uint256 assets);
    event Liquidate(
        address indexed liquidator,
        address indexed violator,
        address collateral,
        uint256 repayAssets,
        uint256 yieldBalance
    );
    event DebtSocialized(address indexed account, uint256 assets);
    event GovSetLTV(
        address indexed collateral,
        uint16 borrowLTV,
        uint16 liquidationLTV,
        uint16 initialLiquidationLTV,
        uint48 targetTimestamp,
        uint32 rampDuration,
        bool initialized
    );

    uint256 internal constant SHIFT = 31;
    uint256 internal constant RAY = 1e27;
    uint16 internal constant CONFIG_SCALE = 1e4;

    TestEVC public immutable evc;
    address public immutable asset;
    address public immutable oracle;
    address public immutable unitOfAccount;
    address public governorAdmin;
    string public name;
    string public symbol;
    uint8 public immutable decimals;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    uint256 public cash;

    uint256 internal totalOwed; // exact (shifted), at `accumulator`
    uint256 internal accumulator = RAY;
    uint256 internal lastAccrual;
    uint256 internal rate; // per second, ray
    uint16 public interestFee = 1000;
    uint16 public maxLiquidationDiscount = 1500;

    struct User {
        uint256 owed; // exact, at `userAccumulator`
        uint256 userAccumulator;
    }
    mapping(address => User) internal users;

    struct LTV {
        uint16 borrowLTV;
        uint16 liquidationLTV;
        bool listed;
    }
    mapping(address => LTV) internal ltvs;
    address[] internal ltvList;

    constructor(TestEVC evc_, address asset_, address oracle_, address unitOfAccount_, string memory name_, string memory symbol_) {
        evc = evc_;
        asset = asset_;
        oracle = oracle_;
        unitOfAccount = unitOfAccount_;
        governorAdmin = msg.sender;
        name = name_;
        symbol = symbol_;
        decimals = IERC20Like(asset_).decimals();
        lastAccrual = block.timestamp;
    }

    function EVC() external view returns (address) {
        return address(evc);
    }

    // Governance

    function setLTV(address collateral, uint16 borrowLTV, uint16 liquidationLTV) external {
        require(msg.sender == governorAdmin, "governor");
        require(borrowLTV <= liquidationLTV && liquidationLTV < CONFIG_SCALE, "ltv");
        bool initialized = ltvs[collateral].listed;
        if (!initialized) ltvList.push(collateral);
        emit GovSetLTV(
            collateral,
            borrowLTV,
            liquidationLTV,
            ltvs[collateral].liquidationLTV,
            uint48(block.timestamp),
            0,
            initialized
        );
        ltvs[collateral] = LTV(borrowLTV, liquidationLTV, true);
    }

    function setInterestRate(uint256 perSecondRay) external {
        require(msg.sender == governorAdmin, "governor");
        accrue();
        rate = perSecondRay;
    }

    function LTVList() external view returns (address[] memory) {
        return ltvList;
    }

    function LTVBorrow(address collateral) external view returns (uint16) {
        return ltvs[collateral].borrowLTV;
    }

    function LTVLiquidation(address collateral) external view returns (uint16) {
        return ltvs[collateral].liquidationLTV;
    }

    // Interest

    function accrued() internal view returns (uint256 acc, uint256 owed) {
        acc = accumulator;
        owed = totalOwed;
        uint256 elapsed = block.timestamp - lastAccrual;
        if (elapsed > 0 && rate > 0) {
            acc = accumulator + (accumulator * rate * elapsed) / RAY;
            owed = (totalOwed * acc) / accumulator;
        }
    }

    function accrue() internal {
        (accumulator, totalOwed) = accrued();
        lastAccrual = block.timestamp;
    }

    function interestRate() external view returns (uint256) {
        return rate;
    }

    function interestAccumulator() external view returns (uint256 acc) {
        (acc, ) = accrued();
    }

    function currentOwed(address account) internal view returns (uint256) {
        User storage u = users[account];
        if (u.owed == 0) return 0;
        (uint256 acc, ) = accrued();
        return (u.owed * acc) / u.userAccumulator;
    }

    function up(uint256 exact) internal pure returns (uint256) {
        return (exact + (1 << SHIFT) - 1) >> SHIFT;
    }

    function debtOfExact(address account) external view returns (uint256) {
        return currentOwed(account);
    }

    function debtOf(address account) public view returns (uint256) {
        return up(currentOwed(account));
    }

    function totalBorrows() public view returns (uint256) {
        (, uint256 owed) = accrued();
        return up(owed);
    }

    function totalAssets() public view returns (uint256) {
        return cash + totalBorrows();
    }

    function convertToAssets(uint256 shares) public view returns (uint256) {
        return totalSupply == 0 ? shares : (shares * totalAssets()) / totalSupply;
    }

    function convertToShares(uint256 assets) public view returns (uint256) {
        uint256 ta = totalAssets();
        return totalSupply == 0 || ta == 0 ? assets : (assets * totalSupply) / ta;
    }

    // Shares

    function deposit(uint256 assets, address receiver) external returns (uint256 shares) {
        accrue();
        shares = convertToShares(assets);
        require(IERC20Like(asset).transferFrom(msg.sender, address(this), assets), "transfer in");
        cash += assets;
        totalSupply += shares;
        balanceOf[receiver] += shares;
        emit Transfer(address(0), receiver, shares);
        emit Deposit(msg.sender, receiver, assets, shares);
    }

    function withdraw(uint256 assets, address receiver, address owner) external returns (uint256 shares) {
        require(msg.sender == owner, "not the owner");
        accrue();
        uint256 ta = totalAssets();
        shares = (assets * totalSupply + ta - 1) / ta;
        balanceOf[owner] -= shares;
        totalSupply -= shares;
        cash -= assets;
        emit Transfer(owner, address(0), shares);
        emit Withdraw(msg.sender, receiver, owner, assets, shares);
        require(IERC20Like(asset).transfer(receiver, assets), "transfer out");
        evc.requireAccountStatusCheck(owner);
    }

    function transfer(address to, uint256 shares) external returns (bool) {
        balanceOf[msg.sender] -= shares;
        balanceOf[to] += shares;
        emit Transfer(msg.sender, to, shares);
        evc.requireAccountStatusCheck(msg.sender);
        return true;
    }

    /// The violator's controller takes its collateral (the EVC's controlCollateral).
    function seize(address from, address to, uint256 shares) external {
        require(evc.isControllerEnabled(from, msg.sender), "not the controller");
        balanceOf[from] -= shares;
        balanceOf[to] += shares;
        emit Transfer(from, to, shares);
    }

    // Borrowing

    function setOwed(address account, uint256 exact) internal {
        User storage u = users[account];
        uint256 before = currentOwed(account);
        totalOwed = totalOwed + exact - before;
        u.owed = exact;
        u.userAccumulator = accumulator;
    }

    function borrow(uint256 assets, address receiver) external {
        accrue();
        // Through the connector's `call`, the sub-account it acts for.
        address account = msg.sender == address(evc) ? evc.currentOnBehalfOf() : msg.sender;
        require(evc.isControllerEnabled(account, address(this)), "controller not enabled");
        setOwed(account, currentOwed(account) + (assets << SHIFT));
        cash -= assets;
        emit Borrow(account, assets);
        require(IERC20Like(asset).transfer(receiver, assets), "transfer out");
        evc.requireAccountStatusCheck(account);
    }

    function repay(uint256 assets, address receiver) external {
        accrue();
        uint256 owed = debtOf(receiver);
        if (assets > owed) assets = owed;
        require(IERC20Like(asset).transferFrom(msg.sender, address(this), assets), "transfer in");
        cash += assets;
        uint256 exact = currentOwed(receiver);
        setOwed(receiver, assets == owed ? 0 : exact - (assets << SHIFT));
        emit Repay(receiver, assets);
    }

    // Risk

    function collateralValue(address account, address collateral, bool liquidation) internal view returns (uint256) {
        LTV memory l = ltvs[collateral];
        uint16 ltv = liquidation ? l.liquidationLTV : l.borrowLTV;
        if (ltv == 0) return 0;
        uint256 balance = IVaultLike(collateral).balanceOf(account);
        if (balance == 0) return 0;
        return (IOracleLike(oracle).getQuote(balance, collateral, unitOfAccount) * ltv) / CONFIG_SCALE;
    }

    function liabilityValue(address account) internal view returns (uint256) {
        uint256 owed = debtOf(account);
        if (owed == 0) return 0;
        if (asset == unitOfAccount) return owed;
        return IOracleLike(oracle).getQuote(owed, asset, unitOfAccount);
    }

    function accountLiquidity(address account, bool liquidation) public view returns (uint256 collateral, uint256 liability) {
        address[] memory list = evc.getCollaterals(account);
        for (uint256 i = 0; i < list.length; i++) collateral += collateralValue(account, list[i], liquidation);
        liability = liabilityValue(account);
    }

    function checkAccountStatus(address account, address[] calldata) external view returns (bytes4) {
        (uint256 collateral, uint256 liability) = accountLiquidity(account, false);
        require(liability == 0 || collateral >= liability, "E_AccountLiquidity");
        return this.checkAccountStatus.selector;
    }

    /// EVault's liquidation, simplified: the violator's debt of `repayAssets` (all of it: max)
    /// moves to the liquidator, who receives collateral shares worth the repaid value over the
    /// discount factor (the health, floored at 1 − maxLiquidationDiscount); at most all of it.
    /// Debt left without collateral is socialized.
    function liquidate(address violator, address collateral, uint256 repayAssets, uint256 minYieldBalance) external {
        accrue();
        require(evc.isControllerEnabled(msg.sender, address(this)), "controller not enabled");
        (uint256 repay, uint256 yieldBalance) = liquidationAmounts(violator, collateral, repayAssets);
        require(yieldBalance >= minYieldBalance, "E_MinYield");
        uint256 exact = currentOwed(violator);
        uint256 moved = repay == debtOf(violator) ? exact : repay << SHIFT;
        setOwed(violator, exact - moved);
        setOwed(msg.sender, currentOwed(msg.sender) + moved);
        emit Repay(violator, repay);
        emit Borrow(msg.sender, repay);
        TestEVault(collateral).seize(violator, msg.sender, yieldBalance);
        uint256 left = debtOf(violator);
        if (left > 0 && noCollateral(violator)) {
            setOwed(violator, 0);
            emit Repay(violator, left);
            emit Withdraw(msg.sender, address(0), address(0), left, 0);
            emit DebtSocialized(violator, left);
        }
        emit Liquidate(msg.sender, violator, collateral, repay, yieldBalance);
        evc.requireAccountStatusCheck(msg.sender);
    }

    function liquidationAmounts(address violator, address collateral, uint256 repayAssets)
        internal
        view
        returns (uint256 repay, uint256 yieldBalance)
    {
        (uint256 cv, uint256 lv) = accountLiquidity(violator, true);
        require(lv > 0 && cv < lv, "E_ExcessiveRepayAmount");
        uint256 floor = 1e18 - uint256(maxLiquidationDiscount) * 1e14;
        uint256 discount = (cv * 1e18) / lv;
        if (discount < floor) discount = floor;
        uint256 owed = debtOf(violator);
        repay = repayAssets == type(uint256).max || repayAssets > owed ? owed : repayAssets;
        uint256 balance = IVaultLike(collateral).balanceOf(violator);
        uint256 balanceValue = IOracleLike(oracle).getQuote(balance, collateral, unitOfAccount);
        uint256 repayValue = asset == unitOfAccount ? repay : IOracleLike(oracle).getQuote(repay, asset, unitOfAccount);
        uint256 yieldValue = (repayValue * 1e18) / discount;
        if (yieldValue >= balanceValue) {
            yieldBalance = balance;
            repay = (repay * ((balanceValue * discount) / 1e18)) / repayValue;
        } else {
            yieldBalance = (balance * yieldValue) / balanceValue;
        }
    }

    function noCollateral(address account) internal view returns (bool) {
        address[] memory list = evc.getCollaterals(account);
        for (uint256 i = 0; i < list.length; i++) if (IVaultLike(list[i]).balanceOf(account) > 0) return false;
        return true;
    }
}

/// An Euler price oracle (EulerRouter) for the tests: quotes set per pair as out units per 1e18 in
/// units; a vault share is quoted as its assets (the router's resolved vaults).
contract TestEulerOracle {
    mapping(address => mapping(address => uint256)) public rates;
    mapping(address => bool) public resolvedVaults;

    function setRate(address base, address quote, uint256 outPer1e18) external {
        rates[base][quote] = outPer1e18;
    }

    function govSetResolvedVault(address vault, bool set) external {
        resolvedVaults[vault] = set;
    }

    function getQuote(uint256 inAmount, address base, address quote) public view returns (uint256) {
        if (resolvedVaults[base]) {
            inAmount = IVaultLike(base).convertToAssets(inAmount);
            base = TestEVault(base).asset();
        }
        if (base == quote) return inAmount;
        uint256 r = rates[base][quote];
        require(r > 0, "PriceOracle_NotSupported");
        return (inAmount * r) / 1e18;
    }
}

/// A controller that answers EVault's views with what no EVault would (an accumulator below 1e27,
/// a liquidation LTV of 100 %): anyone may deploy one and enable it for an account of their own.
contract TestFakeVault {
    address public immutable asset;
    address public immutable oracle;
    address public constant unitOfAccount = 0x0000000000000000000000000000000000000348;
    address public immutable governorAdmin;
    uint16 public constant interestFee = 0;
    uint256 public constant totalAssets = 1e12;
    uint256 public constant totalBorrows = 1e6;
    uint256 public constant interestRate = 0;
    uint256 public immutable interestAccumulator;
    uint8 public constant decimals = 6;
    string public constant name = "Fake vault";
    string public constant symbol = "FAKE";
    address internal immutable collateral;
    uint16 internal immutable ltv;

    constructor(address asset_, address oracle_, uint256 accumulator, address collateral_, uint16 ltv_) {
        asset = asset_;
        oracle = oracle_;
        governorAdmin = msg.sender;
        interestAccumulator = accumulator;
        collateral = collateral_;
        ltv = ltv_;
    }

    function LTVList() external view returns (address[] memory list) {
        list = new address[](1);
        list[0] = collateral;
    }

    function LTVLiquidation(address) external view returns (uint16) {
        return ltv;
    }

    function debtOfExact(address) external pure returns (uint256) {
        return 1 << 60;
    }

    function checkAccountStatus(address, address[] calldata) external pure returns (bytes4) {
        return this.checkAccountStatus.selector;
    }
}

/// Euler's vault factory (GenericFactory) as the reader asks it: whether it made a vault.
contract TestVaultFactory {
    mapping(address => bool) public isProxy;

    function register(address vault) external {
        isProxy[vault] = true;
    }
}
