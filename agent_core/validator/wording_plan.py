"""Findings about the plan as a whole (timeline, sums, the person's constraints and needs, missing
parts) and their evidence, in Chinese and English."""

from __future__ import annotations

from agent_core.validator.wording import Phrase

# timeline: legs
UNREADABLE_TIMES = Phrase("leg.unreadable", "时间无法识别", "its times are not readable")
LEG_TIMES = Phrase("leg.times", "出发 {depart}，到达 {arrive}", "depart {depart}, arrive {arrive}")
OUTSIDE_TRIP = Phrase("leg.outside_trip", "出发日期不在行程 {start}..{end} 之内", "it leaves outside the trip {start}..{end}")
DEPARTS = Phrase("leg.departs", "出发 {depart}", "depart {depart}")
BEFORE_PREVIOUS = Phrase("leg.before_previous", "上一段到达（{arrive}）之前就出发了",
                         "it leaves before the previous leg arrives ({arrive})")
ARRIVES = Phrase("leg.arrives", "{leg} 到达 {arrive}", "{leg} arrives {arrive}")
TOO_SHORT = Phrase("leg.too_short", "{what}之后，{where}只剩 {slack:.0f} 分钟，至少需要 {need} 分钟",
                   "only {slack:.0f} min {where} before departure after {what}; at least {need} min are needed")
AT_AIRPORT = Phrase("where.airport", "赶到机场后距起飞", "at the airport")
AT_STATION = Phrase("where.station", "赶到车站后距发车", "at the station")
AFTER_RIDE = Phrase("before.ride", "乘 {ride} 到达", "arriving with {ride}")
AFTER_VISIT = Phrase("before.visit", "游览 {visit}", "the visit {visit}")
TRANSFER = Phrase("leg.transfer", "route_plan {origin}→{destination}：{minutes} 分钟；{free_at} 起有空",
                  "route_plan {origin}→{destination}: {minutes} min; free from {free_at}")

# timeline: visits, stays, sums
OVERLAPS = Phrase("visit.overlaps", "与 {other} 时间重叠", "it overlaps {other}")
ON_A_RIDE = Phrase("visit.on_a_ride", "这段时间人在 {ride} 上", "the person is on {ride} at that time")
BEFORE_ARRIVAL = Phrase("visit.before_arrival", "人还没到达就开始了", "it starts before the person has arrived")
UNREADABLE_DATES = Phrase("stay.unreadable", "日期无法识别", "its dates are not readable")
NIGHTS_MISMATCH = Phrase("stay.nights", "写的是 {nights} 晚，但日期跨 {span} 晚", "nights={nights} but the dates span {span} nights")
STAY_DATES = Phrase("stay.dates", "入住 {checkin}，退房 {checkout}", "checkin {checkin}, checkout {checkout}")
STAY_TOTAL = Phrase("stay.total", "总价 {total:g} 元不等于晚数×房价", "total {total:g} CNY is not nights x rate")
NIGHTS_TIMES_RATE = Phrase("stay.nights_times_rate", "{nights} × {rate:g} 元 = {sum:g} 元", "{nights} x {rate:g} CNY = {sum:g} CNY")
TOTAL_MISMATCH = Phrase("plan.total", "总价 {total:g} 元不等于各项之和", "the total {total:g} CNY is not the sum of its parts")
PARTS_SUM = Phrase("plan.parts_sum", "交通 + 住宿 + 门票 × {travellers} = {sum:g} 元",
                   "legs + stays + tickets x {travellers} = {sum:g} CNY")

# the person's constraints
OVER_BUDGET = Phrase("constraint.budget", "总价 {total:g} 元超出预算", "the total {total:g} CNY is over the budget")
BUDGET = Phrase("constraint.budget.evidence", "用户预算：{budget:g} 元", "the person's budget: {budget:g} CNY")
FORBIDDEN_KIND = Phrase("constraint.transport", "用户不想乘坐{kind}", "the person does not want to go by {kind}")
NO_KIND = Phrase("constraint.transport.evidence", "用户要求：不坐{kind}", "request: no {kind}")
AVOID_AIRLINE = Phrase("constraint.airline", "用户要求避开 {airline}", "the person asked to avoid {airline}")
OPERATED_BY = Phrase("constraint.airline.evidence", "该航班由 {airline} 执飞", "the flight is operated by {airline}")
WRONG_SEAT = Phrase("constraint.seat", "座位 {seat} 不是用户要求的 {wanted}", "seat {seat} is not the {wanted} the person asked for")
OVERNIGHT = Phrase("constraint.overnight", "用户不坐夜车：这一程 {arrive} 才到（次日或更晚）",
                   "the person wants no overnight ride: this one arrives {arrive}, a later day")
HARD_SEAT = Phrase("constraint.hard_seat", "用户不坐{seat}", "the person wants no {seat}")
LATE_ARRIVAL = Phrase("constraint.arrive_by", "{arrive} 才到，用户要求 {by} 前到", "arrives {arrive}; the person must be there by {by}")
NO_OVERNIGHT_ASKED = Phrase("constraint.overnight.evidence", "用户要求：不坐夜车", "request: no overnight ride")
NO_HARD_SEAT_ASKED = Phrase("constraint.hard_seat.evidence", "用户要求：不坐硬座", "request: no hard seat")
ARRIVE_BY_ASKED = Phrase("constraint.arrive_by.evidence", "用户要求：{by} 前到", "request: be there by {by}")
WRONG_CABIN = Phrase("constraint.cabin", "舱位 {seat} 不是用户要求的 {wanted}", "cabin {seat} is not the {wanted} the person asked for")
REQUESTED = Phrase("request.said", "用户要求：{what}", "request: {what}")
AVOID_PLACE = Phrase("constraint.place", "用户要求避开 {place}", "the person asked to avoid {place}")
AVOID_PLACE_EVIDENCE = Phrase("constraint.place.evidence", "用户要求：避开 {place}", "request: avoid {place}")
WRONG_START = Phrase("constraint.start", "行程不是 {day} 出发", "the trip does not start on {day}")
START_EVIDENCE = Phrase("constraint.start.evidence", "用户要求 {day} 出发；行程开始于 {start}，第一段 {first}",
                        "request: start {day}; plan starts {start}, first leg {first}")
WRONG_END = Phrase("constraint.end", "行程不是 {day} 结束", "the trip does not end on {day}")
END_EVIDENCE = Phrase("constraint.end.evidence", "用户要求 {day} 返回；行程结束于 {end}，最后一段 {last}",
                      "request: back on {day}; plan ends {end}, last leg {last}")

# the person's needs
NIGHTS = Phrase("need.nights", "行程 {nights} 晚，用户要的是 {wanted} 晚", "the trip has {nights} nights, the person asked for {wanted}")
NIGHTS_EVIDENCE = Phrase("need.nights.evidence", "用户要求：{days} 天 / {nights} 晚", "request: {days} days / {nights} nights")
TRAVELLERS = Phrase("need.travellers", "行程按 {planned} 人安排，实际同行 {wanted} 人",
                    "the plan is for {planned}, the person travels with {wanted}")
TRAVELLERS_EVIDENCE = Phrase("need.travellers.evidence", "用户要求：{wanted} 人", "request: {wanted} travellers")
NO_BREAKFAST = Phrase("need.breakfast", "不含早餐，而用户要求含早", "no breakfast, which the person asked for")
BREAKFAST = Phrase("need.breakfast.evidence", "用户要求：含早餐", "request: breakfast")

# missing parts
NO_WAY = Phrase("complete.no_way", "没有从 {origin} 到 {destination} 的交通", "there is no way to get from {origin} to {destination}")
NO_RIDES = Phrase("complete.no_rides", "行程里没有火车或航班", "the plan has no train or flight")
NO_RETURN = Phrase("complete.no_return", "没有返回 {origin} 的交通", "there is no return leg to {origin}")
LAST_LEG = Phrase("complete.last_leg", "最后一段 {number} 到达 {destination}", "the last leg {number} ends at {destination}")
BEDS = Phrase("complete.beds", "{nights} 晚中只有 {covered} 晚有住处", "only {covered} of {nights} nights have a bed")
STAYS = Phrase("complete.stays", "住宿：{names}", "stays: {names}")
NONE = Phrase("none", "无", "none")

# team trips: the party has to meet
PARTY_LATE = Phrase("party.late", "{who} {arrive} 才到，晚于大家会合的 {meet}", "{who} arrives {arrive}, after the party meets at {meet}")
PARTY_LEAVES_EARLY = Phrase("party.leaves_early", "{who} {depart} 就离开，早于最后一项共同安排结束（{end}）",
                            "{who} leaves {depart}, before the last shared item ends at {end}")
PARTY_NO_LEGS = Phrase("party.no_legs", "{who} 没有从 {city} 出发的行程", "{who} has no way there from {city}")
PARTY_MEETS = Phrase("party.meets", "共同安排从 {meet} 开始", "the shared items start at {meet}")

# the request after its changes: where to, which hotel class
WRONG_DESTINATION = Phrase("need.destination", "行程去的是 {planned}，用户要去 {wanted}", "the trip goes to {planned}, the person asked for {wanted}")
DESTINATION_EVIDENCE = Phrase("need.destination.evidence", "用户要求：去 {wanted}", "request: go to {wanted}")
HOTEL_CLASS = Phrase("need.hotel_class", "酒店是 {stars} 星，用户要的是{wanted}", "the hotel is {stars}-star, the person asked for {wanted}")
HOTEL_CLASS_EVIDENCE = Phrase("need.hotel_class.evidence", "用户要求：{wanted}", "request: {wanted}")
BUDGET_CLASS = Phrase("need.hotel_class.budget", "经济型酒店", "a budget hotel")
STARS_CLASS = Phrase("need.hotel_class.stars", "{stars} 星及以上", "{stars} stars or more")
